// Single-machine scheduling (ShinkaEvolve format, C++): evolve the priority rule that orders the jobs.
// Input on stdin: the number of instances, then for each one the number of jobs n and n lines
// "length weight". Output: for each instance, one line with the job indices in the order they run.
// The cost of a schedule is the sum over jobs of weight x completion time (lower is better).
// Only <cstdio>: a small program builds in a fraction of a second, and each candidate is built afresh.
#include <cstdio>

const int MAX_JOBS = 1000;

// EVOLVE-BLOCK-START
double priority(double length, double weight) {
    return weight - length * 1.0;
}
// EVOLVE-BLOCK-END

int main() {
    int instances = 0;
    if (std::scanf("%d", &instances) != 1) return 1;
    static double key[MAX_JOBS];
    static int order[MAX_JOBS];
    for (int k = 0; k < instances; ++k) {
        int n = 0;
        if (std::scanf("%d", &n) != 1 || n < 0 || n > MAX_JOBS) return 1;
        for (int i = 0; i < n; ++i) {
            double length = 0, weight = 0;
            if (std::scanf("%lf %lf", &length, &weight) != 2) return 1;
            key[i] = priority(length, weight);
            // Insertion sort, highest priority first; ties keep the input order.
            int j = i;
            while (j > 0 && key[order[j - 1]] < key[i]) {
                order[j] = order[j - 1];
                --j;
            }
            order[j] = i;
        }
        for (int i = 0; i < n; ++i) std::printf(i ? " %d" : "%d", order[i]);
        std::printf("\n");
    }
    return 0;
}
