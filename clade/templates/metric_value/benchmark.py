"""Benchmark: the mean relative error of the solution's integrals; prints `error: <value>` (lower is better).

    python benchmark.py initial_solution.py

Each integral may evaluate f at most EVALUATIONS times: a rule that asks for more fails the benchmark.
"""
import importlib.util
import math
import sys

EVALUATIONS = 4

# (name, f, a, b, the exact integral)
CASES = [
    ("exp(x) on [0, 1]", math.exp, 0.0, 1.0, math.e - 1.0),
    ("sin(x) on [0, pi]", math.sin, 0.0, math.pi, 2.0),
    ("1 / (1 + x^2) on [0, 1]", lambda x: 1.0 / (1.0 + x * x), 0.0, 1.0, math.pi / 4),
    ("sqrt(1 + x) on [0, 3]", lambda x: math.sqrt(1.0 + x), 0.0, 3.0, 14.0 / 3.0),
    ("x^5 on [-1, 2]", lambda x: x**5, -1.0, 2.0, 10.5),
    ("cos(3x) on [0, 1]", lambda x: math.cos(3.0 * x), 0.0, 1.0, math.sin(3.0) / 3.0),
    ("log(2 + x) on [0, 4]", lambda x: math.log(2.0 + x), 0.0, 4.0, 6.0 * math.log(6.0) - 2.0 * math.log(2.0) - 4.0),
]


def load(path):
    spec = importlib.util.spec_from_file_location("initial_solution", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def counted(f, name):
    calls = []

    def g(x):
        calls.append(x)
        if len(calls) > EVALUATIONS:
            sys.exit(f"{name}: more than {EVALUATIONS} evaluations of f")
        return f(x)

    return g


def main():
    solution = load(sys.argv[1] if len(sys.argv) > 1 else "initial_solution.py")
    errors = []
    for name, f, a, b, exact in CASES:
        got = float(solution.integrate(counted(f, name), a, b))
        errors.append(abs(got - exact) / abs(exact))
        print(f"{name}: {got:.10f} (exact {exact:.10f})")
    error = sum(errors) / len(errors)
    print(f"error: {error if math.isfinite(error) else 'nan'}")


if __name__ == "__main__":
    main()
