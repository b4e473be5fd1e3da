from .version import compare, parse, latest
