"""Task settings of the "benchmark prints metric:value" format (read as data, never run by the engine)."""

TASK_NAME = "Tune a feedback controller that moves a cart to a target position against a steady push"
METRIC_NAME = "tracking_cost"
HIGHER_IS_BETTER = False
PERFECT_SCORE = 0.0
