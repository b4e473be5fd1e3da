from .basic import mean, median
