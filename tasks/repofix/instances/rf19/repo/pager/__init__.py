from .pages import page_count, paginate
