"""The command line of `python -m engine.search`.

Only argparse is imported until the arguments are parsed, so `--help` is
instant and pulls in none of the heavy dependencies.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from engine.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR  # light: the errors module imports nothing


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad flag ends in one line (not usage + error) and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"error: {message} (see --help)\n")


def _positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more (0 is refused rather than given a hidden meaning)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value} (leave it out for the default)")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _OneLineParser(
        prog="python -m engine.search",
        description="Search for better agents: a tree of agent variants in a DuckDB archive, "
        "expanded by a policy (HGM by default), mutated by the offline mutator, evaluated in sandboxes.",
    )
    p.add_argument(
        "--task",
        help="benchmark to run: binpack (default), binpack_cpp (its agent in C++, needs g++), "
        "circle_packing, or a task folder in "
        "OpenEvolve, ShinkaEvolve, metric:value or public/private format",
    )
    p.add_argument(
        "--target",
        type=float,
        help="for a task folder: the metric value that scores 1 (default: the folder's PERFECT_SCORE if it states one)",
    )
    p.add_argument(
        "--policy",
        help="search policy: hgm (default), dgm, shinka, shinka_power_law, shinka_beam, "
        "openevolve, adas, greedy, uct, best_of_n, random (README, Policies)",
    )
    p.add_argument(
        "--stages",
        help="staged evaluation for any policy: N:T or P%%:T[,...] (a node gets N instances, "
        "or P%% of them, and more only if its mean is at least T); none turns off the default of dgm and "
        "hgm (DGM's: 1/6 of dev at 0.4)",
    )
    p.add_argument("--final", help="final rule: epsilon_quantile (HGM's, default), max_mean, max_mean_k")
    p.add_argument(
        "--final-k",
        type=int,
        help="k of --final max_mean_k: the evaluations a final node needs (default: every dev instance)",
    )
    p.add_argument(
        "--budget",
        type=int,
        help="dev evaluations (node x instance) to spend (default: 200); with --resume, the new total",
    )
    p.add_argument(
        "--workers", type=_positive_int, help="evaluations in flight at once, 1 or more (default: one per core)"
    )
    p.add_argument("--seed", type=int, help="random seed of the search (default: 0)")
    p.add_argument("--run-dir", help="folder that holds run folders (default: runs)")
    p.add_argument("--time-limit", type=float, help="stop starting new work after this many seconds")
    p.add_argument(
        "--agent",
        help="start from this agent (a file, or a folder with the task's entry file) instead of the task's seed",
    )
    p.add_argument(
        "--instances", help="JSON file of instances (name -> {capacity, items[, split]}) instead of generated ones"
    )
    p.add_argument("--resume", metavar="RUN", help="continue a stopped run (its folder or archive file)")
    p.add_argument(
        "--resume-from",
        metavar="SNAPSHOT",
        help="a new run (in --run-dir) that continues the tree "
        "of a snapshot made by python -m engine.snapshot export; --budget counts its evaluations too",
    )
    p.add_argument("--quiet", action="store_true", help="no live progress display")
    box = p.add_argument_group(
        "sandboxes and executors (limits default to the task's; binpack: 20 s, 20 CPU s, "
        "1024 MB, 64 processes, 8192 output bytes, 1 CPU)"
    )
    box.add_argument(
        "--sandbox",
        help="auto (default: the strongest that works here: docker, bwrap, process), "
        "process, bwrap (namespaces: no network, read-only root), docker (containers)",
    )
    p.add_argument(
        "--live-interval",
        type=float,
        metavar="SEC",
        help="while the search runs, refresh every SEC "
        "seconds a read-only copy of its archive (archive.live.duckdb) that `python -m engine.runs`, the "
        "plots, the report and the live page read (default: 2; 0: no copy, readers wait for the end)",
    )
    box.add_argument(
        "--compile-check",
        help="a task in a compiled language (C, C++, Rust, Go, Fortran): auto "
        "(default: each child that parses also goes through its compiler, g++ -fsyntax-only, rustc "
        "--emit=metadata, go vet or gfortran -fsyntax-only, inside the sandbox, where installed), on "
        "(the compiler must be there), off (the tree-sitter syntax check alone)",
    )
    box.add_argument(
        "--image",
        help="docker image for --sandbox docker (default: clade-sandbox:py3.11, built "
        "from python:3.11-slim + numpy when missing)",
    )
    box.add_argument(
        "--task-python",
        metavar="PATH",
        help="the Python that runs the candidate and the task "
        "folder's evaluator in the sandbox: an executable or a venv folder (default: the task folder's "
        "'python' file if it has one, else the engine's own); not with docker",
    )
    box.add_argument("--executor", help="local (default) or ray (each evaluation a Ray task)")
    box.add_argument(
        "--ray-address",
        help="an existing Ray cluster (e.g. auto, or ray://host:10001); without it --executor ray starts a local Ray",
    )
    box.add_argument(
        "--gateway-listen",
        metavar="HOST:PORT",
        help="serve the agents' LLM gateway on TCP too, "
        "for Ray workers on other machines (a bearer token per evaluation; 127.0.0.1:0 = any free port)",
    )
    box.add_argument(
        "--gateway-tls",
        nargs=2,
        metavar=("CERT", "KEY"),
        help="serve that TCP endpoint over TLS with this certificate and key (PEM); workers pin the certificate",
    )
    box.add_argument("--timeout", dest="eval_timeout", type=float, help="wall-clock seconds of one evaluation")
    box.add_argument("--memory-mb", type=int, help="memory of one evaluation in MB")
    box.add_argument("--cpu-time", type=int, help="CPU seconds of one evaluation's processes")
    box.add_argument("--max-procs", type=int, help="processes alive at once in one evaluation")
    box.add_argument("--output-bytes", type=int, help="bytes of stdout and of stderr kept per evaluation")
    box.add_argument("--cpus", type=float, help="CPUs one evaluation may use (docker)")
    llm = p.add_argument_group("LLM meta-agent (without --model, the offline mutator is used)")
    llm.add_argument("--model", help="litellm model(s), e.g. openai/gpt-5-mini; several as a,b,c or a@2,b@1")
    llm.add_argument(
        "--api-base", help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 (llama.cpp, vLLM, Ollama)"
    )
    llm.add_argument(
        "--embedding-model",
        metavar="M",
        help="litellm embedding model (e.g. "
        "openai/text-embedding-3-small): with --model, a child whose code embeds within cosine 0.995 of a "
        "node's is sent back to the model as a near-duplicate (default: the offline MinHash check)",
    )
    llm.add_argument("--max-cost", type=float, help="stop new expansions once this many dollars are spent")
    llm.add_argument("--max-tokens", type=int, help="stop new expansions once this many tokens are spent")
    llm.add_argument("--llm-concurrency", type=int, help="model calls in flight at once (default: 2)")
    llm.add_argument("--meta-steps", help="implement (default), or diagnose,implement")
    llm.add_argument(
        "--answer-format",
        help="auto (default: SEARCH/REPLACE blocks, switched to whole files for a "
        "model whose diff answers keep coming back malformed), diff, or rewrite (whole files)",
    )
    llm.add_argument(
        "--max-failed-expansions",
        type=int,
        metavar="K",
        help="stop the run (resumable) after K "
        "expansions in a row with no usable child: failed, or with a model invalid too (default: 8)",
    )
    llm.add_argument(
        "--max-failing-time",
        type=float,
        metavar="SEC",
        help="stop the run (resumable) when no model "
        "call has succeeded for SEC seconds while calls fail (default: 300)",
    )
    llm.add_argument("--model-choice", help="fixed (weights, default) or bandit (ShinkaEvolve's asymmetric UCB)")
    llm.add_argument(
        "--agent-model",
        help="models the agents themselves may call through the run's LLM gateway "
        "(a,b; default: --model's) for tasks such as humaneval",
    )
    llm.add_argument(
        "--agent-max-tokens",
        type=int,
        help="tokens (in + out) one evaluation's agent may use; past "
        "it the evaluation ends as an error (default: the task's cap)",
    )
    own = p.add_argument_group("self-improving agents (HGM, DGM, SICA)")
    own.add_argument(
        "--mutator",
        help="offline (default without --model), llm (default with --model), or self: "
        "the parent agent is run on a copy of its own code and its edits are the child (needs --model, "
        "which the agent calls through the gateway)",
    )
    own.add_argument(
        "--utility",
        metavar="TERMS",
        help="SICA's utility as the score policies see, e.g. "
        "score=0.5,cost=0.25,time=0.25 (weights summing to 1; a timeout halves it)",
    )
    own.add_argument(
        "--cost-cap",
        type=float,
        metavar="USD",
        help="dollars per instance at which the utility's cost term reaches 0 (default: SICA's 10)",
    )
    own.add_argument(
        "--time-cap",
        type=float,
        metavar="SEC",
        help="seconds per instance at which the utility's time term reaches 0 (default: SICA's 300)",
    )
    own.add_argument(
        "--overseer",
        metavar="MODEL",
        help="a model that reads running agents' recent calls every "
        "few calls and may stop one that loops, stalls or games its task (SICA's overseer)",
    )
    bench = p.add_argument_group("benchmarks that evolve or are judged (SIA, the four-level loops)")
    bench.add_argument(
        "--bootstrap",
        action="store_true",
        default=None,
        help="a public/private task folder "
        "without a seed program: the meta-agent (--model) writes the seed from data/public/task.md "
        "(up to 3 tries, each failure fed back)",
    )
    bench.add_argument(
        "--arena",
        metavar="MODE",
        help="single or tournament: test-writing agents co-evolve "
        "against the code agents; tests a trusted oracle confirms join the dev set (tasks with an "
        "oracle: email_validation)",
    )
    bench.add_argument(
        "--arena-round",
        type=int,
        metavar="K",
        help="single: code children per round; tournament: "
        "rounds between replacing the worst of each population by a child of its best (default: 2)",
    )
    bench.add_argument(
        "--arena-population", type=int, metavar="P", help="tournament: code agents and testers, each (default: 4)"
    )
    bench.add_argument("--arena-proposals", type=int, metavar="N", help="tests a tester proposes per run (default: 10)")
    bench.add_argument(
        "--judge-model",
        metavar="MODEL",
        help="the model that grades a rubric task's answers against its boolean checks, outside the sandbox",
    )
    llm.add_argument(
        "--replay",
        metavar="RUN",
        help="run the search of RUN again, every model call answered from RUN's archive at no cost",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from engine.errors import UserError

    try:
        from engine.front.run import run_from_args

        return run_from_args(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
