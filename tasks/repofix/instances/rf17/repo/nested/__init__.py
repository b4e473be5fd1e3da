from .flat import flatten, depth
