from .deep import deep_merge
