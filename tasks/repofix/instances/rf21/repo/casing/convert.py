def camel_to_snake(name):
    """'parseHttpRequest' or 'ParseHttpRequest' -> 'parse_http_request'."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper():
            out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)


def snake_to_camel(name, upper_first=False):
    words = [w for w in name.split("_") if w]
    head = words[0].capitalize() if upper_first and words else (words[0] if words else "")
    return head + "".join(w.capitalize() for w in words[1:])
