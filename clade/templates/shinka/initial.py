"""Six circles in the unit square: prints one circle a line, `x y r` (centre and radius)."""

CIRCLES = 6


# EVOLVE-BLOCK-START
def pack(n):
    """Equal circles on a grid: three columns, two rows."""
    columns, rows = 3, 2
    radius = 0.15
    circles = []
    for k in range(n):
        x = (k % columns + 0.5) / columns
        y = (k // columns + 0.5) / rows
        circles.append((x, y, radius))
    return circles


# EVOLVE-BLOCK-END


if __name__ == "__main__":
    for x, y, r in pack(CIRCLES):
        print(f"{x:.12f} {y:.12f} {r:.12f}")
