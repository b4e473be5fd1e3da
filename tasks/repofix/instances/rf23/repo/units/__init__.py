from .length import convert
