from .flags import parse_bool
