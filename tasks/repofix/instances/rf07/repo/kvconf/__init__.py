from .parser import parse_config
