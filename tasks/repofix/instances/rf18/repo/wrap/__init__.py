from .lines import wrap
