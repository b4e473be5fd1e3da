"""Greedy 0/1 knapsack (OpenEvolve format): evolve the priority that decides which items a greedy packer takes.

A greedy packer sorts the items by a priority and takes each one that still fits. How good
it is depends entirely on that priority; only the function between the EVOLVE-BLOCK markers
changes during a search.
"""


# EVOLVE-BLOCK-START
def priority(value, weight, capacity):
    """How much the packer wants an item of this value and weight in a knapsack of `capacity`: higher first."""
    return value - weight * 0.5


# EVOLVE-BLOCK-END


# This part stays fixed: the packer the evaluator calls.
def pack(items, capacity):
    """The indices of the items taken: in decreasing priority, each one that still fits."""
    order = sorted(range(len(items)), key=lambda i: priority(items[i][0], items[i][1], capacity), reverse=True)
    taken, room = [], capacity
    for i in order:
        if items[i][1] <= room:
            taken.append(i)
            room -= items[i][1]
    return taken


if __name__ == "__main__":
    print(pack([(60, 10), (100, 20), (120, 30)], 50))
