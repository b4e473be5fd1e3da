// Six circles in the unit square: prints one circle a line, `x y r` (centre and radius).
#include <stdio.h>

#define CIRCLES 6

// EVOLVE-BLOCK-START
// Equal circles on a grid: three columns, two rows.
void pack(int n, double x[], double y[], double r[]) {
    int columns = 3;
    int rows = 2;
    double radius = 0.15;
    for (int k = 0; k < n; k++) {
        x[k] = (k % columns + 0.5) / columns;
        y[k] = (k / columns + 0.5) / rows;
        r[k] = radius;
    }
}
// EVOLVE-BLOCK-END

int main(void) {
    double x[CIRCLES], y[CIRCLES], r[CIRCLES];
    pack(CIRCLES, x, y, r);
    for (int k = 0; k < CIRCLES; k++) {
        printf("%.12f %.12f %.12f\n", x[k], y[k], r[k]);
    }
    return 0;
}
