from .merge import merge_intervals, total_length
