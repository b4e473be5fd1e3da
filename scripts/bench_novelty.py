#!/usr/bin/env python3
"""Time NoveltyIndex.check + add per node on synthetic ~40-line programs, as an evolving archive grows.

Usage, from the project root: python scripts/bench_novelty.py [SIZE ...]   (default: 10000 100000)

Programs grow as a tree: each is a random earlier one with 1-3 edits (a
constant, an operator, a new statement, a renamed local) or, one time in
ten, a fresh random program; so the archive is full of close relatives, as a
search's is. Only check+add is timed (generating the programs is not). The
last line compares with a brute-force exact Jaccard against every node, at
2k nodes.
"""

from __future__ import annotations

import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.mutators.novelty import (  # noqa: E402
    NoveltyIndex,
    jaccard,
    normalized_source,
    numbers_key,
    shingle_hashes,
    tokens,
)

OPS = ["+", "-", "*", "/", "%", "//", "**"]
CALLS = ["np.sqrt", "np.abs", "np.sin", "np.cos", "np.tanh", "abs", "float"]


def statement(rng: random.Random, names: list[str]) -> str:
    a, b = rng.choice(names), rng.choice(names)
    expr = f"{rng.choice(CALLS)}({a} {rng.choice(OPS)} {round(rng.uniform(0, 9), 2)}) {rng.choice(OPS)} {b}"
    return f"    {rng.choice(names)} = {expr}"


def fresh(rng: random.Random) -> list[str]:
    names = [f"w{i}" for i in range(8)]
    body = [f"    {n} = {round(rng.uniform(0, 9), 2)}" for n in names]
    body += [statement(rng, names) for _ in range(28)]
    body.insert(20, f"    for i in range({rng.randint(2, 9)}):")
    body[21] = "    " + body[21]
    return ["import numpy as np", "", "", "def solve(x):", *body, "    return x + " + " + ".join(names[:3])]


def child(rng: random.Random, parent: list[str]) -> list[str]:
    lines = list(parent)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(4, len(lines) - 1)
        if lines[i].lstrip().startswith("for "):
            continue
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        kind = rng.random()
        if kind < 0.4:
            lines[i] = indent + statement(rng, [f"w{j}" for j in range(8)]).lstrip()
        elif kind < 0.7:
            lines[i] = lines[i].replace(f" {rng.choice(OPS)} ", f" {rng.choice(OPS)} ", 1)
        elif kind < 0.9:
            lines.insert(i, indent + statement(rng, [f"w{j}" for j in range(8)]).lstrip())
        else:
            lines = [line.replace("w7", "tmp") for line in lines]
    return lines


def programs(n: int, seed: int = 0) -> list[dict[str, str]]:
    rng = random.Random(seed)
    tree: list[list[str]] = []
    for _ in range(n):
        tree.append(fresh(rng) if not tree or rng.random() < 0.1 else child(rng, rng.choice(tree)))
    return [{"agent.py": "\n".join(lines) + "\n"} for lines in tree]


def time_index(progs: list[dict[str, str]]) -> tuple[float, int]:
    index, rejected = NoveltyIndex(), 0
    started = time.perf_counter()
    for node_id, files in enumerate(progs):
        rejected += index.check(files) is not None
        index.add(node_id, files)
    return (time.perf_counter() - started) / len(progs), rejected


def time_brute_force(progs: list[dict[str, str]], threshold: float = 0.95) -> tuple[float, int]:
    """The index's rule (identical text, or same numbers and Jaccard >= threshold) with a Jaccard to every node."""
    kept: list[tuple[str, str, object]] = []
    rejected = 0
    started = time.perf_counter()
    for files in progs:
        text = normalized_source(files, "agent.py")
        toks = tokens(text)
        numbers, shingles = numbers_key(toks), shingle_hashes(toks)
        similar = [(t, n, jaccard(s, shingles)) for t, n, s in kept]  # every pair: what the LSH avoids
        rejected += any(t == text or (n == numbers and j >= threshold) for t, n, j in similar)
        kept.append((text, numbers, shingles))
    return (time.perf_counter() - started) / len(progs), rejected


def main(sizes: list[int]) -> None:
    for size in sizes:
        per_node, rejected = time_index(programs(size))
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{size:>7} nodes: check+add {per_node * 1e3:.2f} ms per node ({rejected} rejected; "
            f"peak memory of the process {peak_mb:.0f} MB)",
            flush=True,
        )
    small = programs(2000)
    index_s, index_rejected = time_index(small)
    brute_s, brute_rejected = time_brute_force(small)
    print(
        f"   2000 nodes: index {index_s * 1e3:.2f} ms, brute-force all-pairs Jaccard {brute_s * 1e3:.2f} ms "
        f"per node ({brute_s / index_s:.0f}x slower; rejected {index_rejected} vs {brute_rejected})"
    )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
