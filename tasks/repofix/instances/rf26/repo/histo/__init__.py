from .bins import histogram
