"""Benchmark: simulate the controller on a cart and print `tracking_cost: <value>` (lower is better).

    python benchmark.py [path of initial_solution.py]

The cart (mass 1 kg, light friction) starts at rest at 0 and must reach a
target position while a constant force pushes it (a slope, a wind). Four
scenarios of 8 s each, simulated with 10 ms steps; the force is clipped to
+-5 N. The cost of a scenario is the time-average of |target - position| plus
a small penalty on the force used (0.002 x mean force squared); the metric
is the mean over the scenarios. A controller that lets the cart run away
(|position| > 100) gets the cost 100 for that scenario.
"""

import importlib.util
import math
import sys

DT, SECONDS, MAX_FORCE = 0.01, 8.0, 5.0
MASS, FRICTION = 1.0, 0.2
SCENARIOS = [(1.0, 0.5), (-2.0, -0.8), (3.0, 1.2), (0.5, -1.5)]  # (target, steady push in N)
RUNAWAY, RUNAWAY_COST = 100.0, 100.0


def load_control():
    """The candidate's control function: from the path given, else the module initial_solution beside us."""
    if len(sys.argv) > 1:
        spec = importlib.util.spec_from_file_location("initial_solution", sys.argv[1])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.control
    from initial_solution import control

    return control


def scenario_cost(control, target, push):
    position = velocity = error_sum = 0.0
    previous_error = target
    total_error = total_force = 0.0
    steps = int(SECONDS / DT)
    for _ in range(steps):
        error = target - position
        error_sum += error * DT
        force = float(control(error, error_sum, (error - previous_error) / DT))
        if not math.isfinite(force):
            return RUNAWAY_COST
        force = max(-MAX_FORCE, min(MAX_FORCE, force))
        previous_error = error
        acceleration = (force + push - FRICTION * velocity) / MASS
        velocity += acceleration * DT
        position += velocity * DT
        if abs(position) > RUNAWAY:
            return RUNAWAY_COST
        total_error += abs(error)
        total_force += force * force
    return total_error / steps + 0.002 * total_force / steps


if __name__ == "__main__":
    control = load_control()
    costs = [scenario_cost(control, target, push) for target, push in SCENARIOS]
    print(f"scenarios: {len(costs)}, worst cost {max(costs):.4f}")
    print(f"tracking_cost: {sum(costs) / len(costs):.6f}")
