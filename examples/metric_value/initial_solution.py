"""The controller under evolution: the force on a cart, from how far it is from its target.

`control` is called every 10 ms of simulated time with the position error
(target - position), its running integral and its rate of change; it returns
the force to apply. The actuator saturates at +-5 (benchmark.py).
"""


def control(error, error_sum, error_change):
    """A proportional controller with a little damping: pushes toward the target, harder when farther."""
    return 1.0 * error + 0.1 * error_change
