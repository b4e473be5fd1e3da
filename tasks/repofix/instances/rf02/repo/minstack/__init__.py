from .stack import MinStack
