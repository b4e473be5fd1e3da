from .check import is_balanced
