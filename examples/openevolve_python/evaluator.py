"""Evaluator of the greedy knapsack example (OpenEvolve format).

`evaluate(program_path)` packs 24 fixed random instances (40 items each) with
the program's `pack(items, capacity)` and compares each packing's value with
the instance's optimum (dynamic programming over the capacity). The metrics:
`combined_score`, the mean share of the optimum reached (1.0 is optimal on
every instance; higher is better), and `optimal_instances`, how many were
packed optimally. A packing that overflows the knapsack or names an item
twice scores 0 on its instance.
"""

import importlib.util
import random

INSTANCES, ITEMS = 24, 40


def instances():
    """(items, capacity) pairs; items are (value, weight); values loosely follow weights, as in real loads."""
    rng = random.Random(2024)
    out = []
    for _ in range(INSTANCES):
        items = []
        for _ in range(ITEMS):
            weight = rng.randint(1, 30)
            items.append((weight + rng.randint(1, 20), weight))
        capacity = sum(w for _, w in items) // 4
        out.append((items, capacity))
    return out


def optimum(items, capacity):
    """The best total value that fits: the classic DP over remaining capacity."""
    best = [0] * (capacity + 1)
    for value, weight in items:
        for room in range(capacity, weight - 1, -1):
            best[room] = max(best[room], best[room - weight] + value)
    return best[capacity]


def load(program_path):
    spec = importlib.util.spec_from_file_location("program", program_path)
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    return program


def packed_value(taken, items, capacity):
    """The value of a packing, recomputed here (never trusted from the program); 0 for an invalid one."""
    chosen = [int(i) for i in taken]
    if len(set(chosen)) != len(chosen) or any(not 0 <= i < len(items) for i in chosen):
        return 0
    if sum(items[i][1] for i in chosen) > capacity:
        return 0
    return sum(items[i][0] for i in chosen)


def evaluate(program_path):
    try:
        program = load(program_path)
        shares = []
        for items, capacity in instances():
            best = optimum(items, capacity)
            shares.append(packed_value(program.pack(items, capacity), items, capacity) / best)
    except Exception as exc:  # noqa: BLE001 - the format: any failure is a zero score
        return {"combined_score": 0.0, "error": str(exc)}
    return {
        "combined_score": sum(shares) / len(shares),
        "optimal_instances": sum(share >= 1.0 for share in shares),
    }
