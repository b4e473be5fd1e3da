// Six circles in the unit square: prints one circle a line, `x y r` (centre and radius).
#include <cstdio>
#include <vector>

const int CIRCLES = 6;

struct Circle {
    double x, y, r;
};

// EVOLVE-BLOCK-START
// Equal circles on a grid: three columns, two rows.
std::vector<Circle> pack(int n) {
    int columns = 3;
    int rows = 2;
    double radius = 0.15;
    std::vector<Circle> circles;
    for (int k = 0; k < n; k++) {
        circles.push_back({(k % columns + 0.5) / columns, (k / columns + 0.5) / rows, radius});
    }
    return circles;
}
// EVOLVE-BLOCK-END

int main() {
    for (const Circle& c : pack(CIRCLES)) {
        std::printf("%.12f %.12f %.12f\n", c.x, c.y, c.r);
    }
    return 0;
}
