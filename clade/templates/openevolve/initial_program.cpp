// The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each.
#include <cmath>
#include <iomanip>
#include <iostream>

// EVOLVE-BLOCK-START
// A straight line: hot at the start, a fixed loss per minute.
double temperature(double t) {
    double start = 85.0;
    double loss_per_minute = 2.0;
    return start - loss_per_minute * t;
}
// EVOLVE-BLOCK-END

int main() {
    double t;
    std::cout << std::setprecision(10);
    while (std::cin >> t) {
        std::cout << temperature(t) << "\n";
    }
    return 0;
}
