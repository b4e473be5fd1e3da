def paginate(items, page, per_page=10):
    """Items on 1-based page `page`; ValueError for page < 1."""
    if page < 1:
        raise ValueError("pages start at 1")
    start = page * per_page
    return items[start:start + per_page]


def page_count(n_items, per_page=10):
    return (n_items + per_page - 1) // per_page
