from .text import slugify
