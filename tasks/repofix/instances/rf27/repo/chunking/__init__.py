from .chunks import chunked
