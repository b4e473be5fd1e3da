// The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each.
#include <math.h>
#include <stdio.h>

// EVOLVE-BLOCK-START
// A straight line: hot at the start, a fixed loss per minute.
double temperature(double t) {
    double start = 85.0;
    double loss_per_minute = 2.0;
    return start - loss_per_minute * t;
}
// EVOLVE-BLOCK-END

int main(void) {
    double t;
    while (scanf("%lf", &t) == 1) {
        printf("%.10g\n", temperature(t));
    }
    return 0;
}
