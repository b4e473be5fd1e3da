import re


def slugify(title, sep="-"):
    """'Hello, World!' -> 'hello-world': lower-case words joined by sep, no leading/trailing sep."""
    slug = re.sub(r"[^a-z0-9]+", sep, title.lower())
    return slug.strip(sep)
