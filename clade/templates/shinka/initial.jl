# Six circles in the unit square: prints one circle a line, `x y r` (centre and radius).
using Printf

const CIRCLES = 6

# EVOLVE-BLOCK-START
# Equal circles on a grid: three columns, two rows.
function pack(n)
    columns, rows = 3, 2
    radius = 0.15
    return [((k % columns + 0.5) / columns, (k ÷ columns + 0.5) / rows, radius) for k in 0:n-1]
end
# EVOLVE-BLOCK-END

for (x, y, r) in pack(CIRCLES)
    @printf("%.12f %.12f %.12f\n", x, y, r)
end
