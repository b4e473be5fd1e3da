from .rules import is_strong, problems
