from .split import split_line
