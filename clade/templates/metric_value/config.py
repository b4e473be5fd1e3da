"""Task settings (the "benchmark prints metric: value" format); read as data, never run by Clade."""
TASK_NAME = "Integrate smooth functions with four evaluations each"
METRIC_NAME = "error"
HIGHER_IS_BETTER = False
PERFECT_SCORE = 0.0
