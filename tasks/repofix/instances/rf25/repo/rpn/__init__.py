from .calc import evaluate
