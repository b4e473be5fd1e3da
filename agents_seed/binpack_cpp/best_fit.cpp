// Best fit for online bin packing in C++ (FunSearch's benchmark, Romera-Paredes et al., Nature 2024).
// main() reads one instance from stdin ("capacity n" then n item sizes), places each item as it arrives
// into the open bin of highest priority(item, remaining) among those it fits in (ties: the lowest
// index), opens a new bin when none fits, and prints each item's bin index, one a line.
// Reference agent: best fit, the bar a search should reach.
#include <cmath>
#include <cstdio>
#include <vector>

// EVOLVE-BLOCK-START
double priority(double item, double remaining) {
    return -(remaining - item);  // the bin left with the least room wins
}
// EVOLVE-BLOCK-END

int main() {
    double capacity = 0;
    long n = 0;
    if (std::scanf("%lf %ld", &capacity, &n) != 2 || n < 0) {
        return 1;
    }
    std::vector<double> remaining;  // free room of every open bin
    remaining.reserve(n);
    for (long i = 0; i < n; ++i) {
        double item = 0;
        if (std::scanf("%lf", &item) != 1) {
            return 1;
        }
        long best = -1;
        double best_priority = 0;
        for (long b = 0; b < (long)remaining.size(); ++b) {
            if (remaining[b] - item < 0) {
                continue;
            }
            double p = priority(item, remaining[b]);
            if (best < 0 || p > best_priority) {
                best = b;
                best_priority = p;
            }
        }
        if (best < 0) {
            best = (long)remaining.size();
            remaining.push_back(capacity);
        }
        remaining[best] -= item;
        std::printf("%ld\n", best);
    }
    return 0;
}
