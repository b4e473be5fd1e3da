"""What the LLM mutator costs on our side: prompt building + answer parsing + diff application, per call.

Builds a synthetic 2,000-line agent file and a realistic `PromptContext`
(6 feedback items with long stderr, a lineage of 10 steps, 2 inspirations of
the same size), then times, per call, `build_mutation_prompt` + `parse_answer`
on an answer with 5 SEARCH/REPLACE blocks + `apply_blocks`, as the median over
many repetitions. Also times two slower paths for information: a
whitespace-tolerant block, and a block that does not apply (closest-lines
search). Finally prints the size of the prompt for the binpack seed agent.

    python scripts/bench_llm_overhead.py            # 300 repetitions
    python scripts/bench_llm_overhead.py --reps 1000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.mutators.answers import parse_answer
from engine.mutators.edits import apply_blocks
from engine.mutators.prompt import (
    Inspiration,
    InstanceFeedback,
    LineageStep,
    PromptContext,
    build_mutation_prompt,
)

GOAL_MS = 5.0
N_LINES = 2_000


def synthetic_agent(n_lines: int = N_LINES, salt: int = 0) -> str:
    """A plausible agent module of exactly `n_lines` lines: helpers, then `priority`."""
    lines = ['"""A large synthetic bin-packing agent."""', "import math", "", "import numpy as np", "", ""]
    k = 0
    while len(lines) < n_lines - 12:
        lines += [
            f"def _feature_{k}(item, bins, scale={1.0 + k / 100 + salt:.2f}):",
            f'    """Feature {k}: a weighted slack term with a soft threshold."""',
            "    slack = bins - item",
            f"    weight = math.exp(-abs(scale - {k % 7}) / 3.0)",
            f"    if item > {20 + k % 60}:",
            f"        slack = slack * {1.0 + (k % 5) / 10:.1f}",
            "    else:",
            f"        slack = np.maximum(slack, {k % 3})",
            "    total = 0.0",
            f"    for j in range({1 + k % 4}):",
            "        total += weight * j",
            "    return -slack * weight + total",
            "",
            "",
        ]
        k += 1
    lines = lines[: n_lines - 12]
    while lines and lines[-1] == "":
        lines.pop()
    lines += ["", ""]
    lines += [
        "def priority(item, bins):",
        '    """One priority per feasible bin."""',
        "    scores = np.zeros_like(bins)",
    ]
    lines += [f"    scores = scores + _feature_{j}(item, bins)" for j in range(min(k, 5))]
    lines += ["    return scores"]
    lines += [""] * (n_lines - len(lines))
    return "\n".join(lines[:n_lines]) + "\n"


def answer_with_blocks(source: str, n_blocks: int = 5, indent_shift: bool = False, broken: bool = False) -> str:
    """An answer editing `n_blocks` helpers spread over the file, as a model would write it."""
    lines = source.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("def _feature_")]
    step = max(len(starts) // n_blocks, 1)
    parts = ["Change: tune the thresholds of five features.\n"]
    for b in range(n_blocks):
        i = starts[min(b * step, len(starts) - 1)]
        old = lines[i + 4 : i + 6]  # the `if item > ...` line and the line under it
        new = [old[0].replace(">", ">="), old[1].replace("slack *", "slack * 1.1 *")]
        if indent_shift and b == 0:  # the model dropped one indentation level
            old = [s[4:] for s in old]
            new = [s[4:] for s in new]
        if broken and b == n_blocks - 1:  # a SEARCH line the file does not have
            old = [old[0], old[1].replace("slack *", "slack +")]
        parts.append(
            "agent.py\n```python\n<<<<<<< SEARCH\n"
            + "\n".join(old)
            + "\n=======\n"
            + "\n".join(new)
            + "\n>>>>>>> REPLACE\n```\n"
        )
    return "\n".join(parts)


def context(files: dict[str, str], description: str, max_file_chars: int) -> PromptContext:
    stderr = "".join(f'  File "agent.py", line {n}, in _feature_{n}\n    slack = bins - item\n' for n in range(400))
    feedback = [
        InstanceFeedback(
            f"weibull_{k}",
            "error" if k % 2 else "ok",
            None if k % 2 else 0.27 + k / 100,
            "answer.json is not JSON" if k % 2 else f"{40 + k} bins, L1 39",
            stderr + "ZeroDivisionError: float division by zero",
        )
        for k in range(6)
    ]
    lineage = [
        LineageStep(
            n * 3, "seed" if n == 0 else f"tune threshold of _feature_{n} and reweight slack", 0.5 + 0.01 * n, 16
        )
        for n in range(10)
    ]
    inspirations = [Inspiration(100 + j, 0.6 + j / 10, {"agent.py": synthetic_agent(salt=j + 1)}) for j in range(2)]
    return PromptContext(
        task_description=description,
        entry_file="agent.py",
        entry_function="priority",
        entry_args=("item", "bins"),
        parent_files=files,
        feedback=feedback,
        lineage=lineage,
        inspirations=inspirations,
        max_file_chars=max_file_chars,
    )


def one_call(ctx: PromptContext, answer: str) -> tuple[int, int]:
    messages = build_mutation_prompt(ctx)
    blocks = parse_answer(answer, "diff", ctx.entry_file)
    result = apply_blocks(ctx.parent_files, blocks)
    return sum(len(m["content"]) for m in messages), len(result.failures)


def median_ms(ctx: PromptContext, answer: str, reps: int) -> tuple[float, float]:
    for _ in range(5):
        one_call(ctx, answer)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        one_call(ctx, answer)
        times.append(time.perf_counter() - t0)
    times.sort()
    return 1000 * statistics.median(times), 1000 * times[int(0.95 * (len(times) - 1))]


def stage_ms(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    from tasks.binpack.task import DESCRIPTION

    source = synthetic_agent()
    assert len(source.splitlines()) == N_LINES
    ctx = context({"agent.py": source}, DESCRIPTION, max_file_chars=len(source) + 1)  # the whole file shown
    answer = answer_with_blocks(source)
    chars, failures = one_call(ctx, answer)
    assert failures == 0, "the benchmark answer must apply"
    blocks = parse_answer(answer, "diff", "agent.py")
    assert len(blocks) == 5

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: nproc {cores} (os.cpu_count {os.cpu_count()}), Python {sys.version.split()[0]}")
    print(
        f"agent: {N_LINES} lines, {len(source):,} characters; prompt {chars:,} characters "
        f"(6 feedback items, lineage of 10 steps, 2 inspirations of {N_LINES} lines each); answer: 5 blocks"
    )
    median, p95 = median_ms(ctx, answer, args.reps)
    verdict = "meets" if median < GOAL_MS else "MISSES"
    print(
        f"prompt + parse + apply: {median:.2f} ms per call (median of {args.reps}; p95 {p95:.2f} ms)   "
        f"goal: under {GOAL_MS:g} ms per call at a 2,000-line agent -> {verdict}"
    )
    reps = max(args.reps // 3, 20)
    print(
        f"  stages (median): prompt {stage_ms(lambda: build_mutation_prompt(ctx), reps):.2f} ms, "
        f"parse {stage_ms(lambda: parse_answer(answer, 'diff', 'agent.py'), reps):.2f} ms, "
        f"apply {stage_ms(lambda: apply_blocks(ctx.parent_files, blocks), reps):.2f} ms"
    )
    shifted = answer_with_blocks(source, indent_shift=True)
    assert one_call(ctx, shifted)[1] == 0
    print(f"  with one block matched whitespace-tolerantly: {median_ms(ctx, shifted, reps)[0]:.2f} ms per call")
    broken = answer_with_blocks(source, broken=True)
    assert one_call(ctx, broken)[1] == 1
    print(
        f"  with one block that does not apply (closest lines searched): "
        f"{median_ms(ctx, broken, reps)[0]:.2f} ms per call"
    )

    seed = (REPO / "agents_seed/binpack/agent.py").read_text()
    seed_ctx = PromptContext(
        task_description=DESCRIPTION,
        entry_file="agent.py",
        entry_function="priority",
        entry_args=("item", "bins"),
        parent_files={"agent.py": seed},
    )
    seed_chars = sum(len(m["content"]) for m in build_mutation_prompt(seed_ctx))
    print(
        f"binpack seed prompt (no feedback, lineage or inspirations yet): {seed_chars:,} characters, "
        f"about {seed_chars / 4:,.0f} tokens (estimate: characters / 4, not a tokenizer count)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
