from .pct import percentile
