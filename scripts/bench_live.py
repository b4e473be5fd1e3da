"""What readers cost a running search: its throughput alone, with `runs show` every second, with the live page open.

    python scripts/bench_live.py                 # binpack, budget 96, 2 workers, 3 rounds of every setting
    python scripts/bench_live.py --workers 1     # a core left to the readers: what the mechanism itself costs
    python scripts/bench_live.py --budget 32 --rounds 1

Each setting runs the same real search (`python -m engine.search --task binpack
--budget B --workers W --seed S --quiet`, offline mutator, the default sandbox)
in a fresh folder:

- `no copy`: `--live-interval 0`, no live copy kept, nobody reads (what Clade was);
- `alone`: the default (a live copy every 2 s, archive/live.py), nobody reads;
- `show 1/s`: `python -m engine.runs show RUN` started again every second while it runs;
- `page open`: `python -m engine.runs serve` on the run's folder, and a client that fetches
  what the page fetches (the run's JSON) every 2 s, as an open browser tab does;
- `page + show`: both.

Throughput = dev evaluations / the search's wall time (its `session` events,
Archive.wall_seconds). The settings run in turn within a round,
the order rotated each round, so the machine's drift spreads over all of them;
the median over rounds is compared with `alone` (the ratio; the issue's goal:
readers cost less than 5 %, ratio >= 0.95) and `alone` with `no copy` (what
keeping the copy costs). The load average before and after is printed:
searches and readers share the same cores. Readers of a running search run at
the lowest priority (engine/runinfo/yielding.py), so on a busy machine they
wait rather than the search: the median seconds one `runs show` and one page
request took are printed beside the ratios.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SETTINGS = ("no copy", "alone", "show 1/s", "page open", "page + show")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keep_showing(run_dir: Path, stop: threading.Event, counter: list[int], waits: dict) -> None:
    while not stop.is_set():
        runs = [p for p in run_dir.iterdir() if (p / "archive.duckdb").is_file()] if run_dir.is_dir() else []
        if runs:
            began = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "engine.runs", "show", str(runs[0])], cwd=REPO, capture_output=True, timeout=60
            )
            waits["show"].append(time.perf_counter() - began)
            counter[0] += 1
        stop.wait(1.0)


def keep_polling(port: int, run_dir: Path, stop: threading.Event, counter: list[int], waits: dict) -> None:
    """What an open tab of the live page asks for every 2 s (engine/live/app.py): the runs, and the run's data."""
    base = f"http://127.0.0.1:{port}"
    while not stop.is_set():
        runs = [p for p in run_dir.iterdir() if (p / "archive.duckdb").is_file()] if run_dir.is_dir() else []
        for url in [f"{base}/api/runs"] + [f"{base}/api/run/{run.name}" for run in runs[:1]]:
            try:
                began = time.perf_counter()
                with urllib.request.urlopen(url, timeout=30) as answer:
                    answer.read()
                waits["page"].append(time.perf_counter() - began)
                counter[0] += 1
            except OSError:
                pass  # the server is starting, or the run folder is not there yet
        stop.wait(2.0)


def one_search(setting: str, folder: Path, budget: int, seed: int, workers: int, waits: dict) -> tuple[float, int]:
    """(dev evaluations per second, reader requests made) of one search under `setting`; each reader request's
    seconds are appended to `waits` ('show': one `runs show` process, 'page': one request to the page)."""
    from engine.runinfo.info import run_info

    run_dir = folder / "runs"
    run_dir.mkdir(parents=True)
    argv = [
        sys.executable,
        "-m",
        "engine.search",
        "--task",
        "binpack",
        "--budget",
        str(budget),
        "--workers",
        str(workers),
        "--seed",
        str(seed),
        "--run-dir",
        str(run_dir),
        "--quiet",
    ]
    if setting == "no copy":
        argv += ["--live-interval", "0"]
    stop, counter, threads, server = threading.Event(), [0], [], None
    if "page" in setting:
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "engine.runs", "serve", str(run_dir), "--port", str(port)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        threads.append(threading.Thread(target=keep_polling, args=(port, run_dir, stop, counter, waits)))
    if "show" in setting:
        threads.append(threading.Thread(target=keep_showing, args=(run_dir, stop, counter, waits)))
    for t in threads:
        t.start()
    try:
        subprocess.run(argv, cwd=REPO, check=True, capture_output=True, timeout=1800)
    finally:
        stop.set()
        for t in threads:
            t.join()
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    info = run_info(next(run_dir.iterdir()))
    return info.dev_evals / info.wall_s, counter[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=96)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--workers",
        type=int,
        default=2,
        help="the search's workers (default 2: every core of this "
        "machine busy, so a reader's CPU is taken from the search; 1 leaves a core to the readers)",
    )
    p.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated, from: " + ", ".join(SETTINGS))
    args = p.parse_args(argv)
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        p.error(f"unknown settings {unknown}")
    rates: dict[str, list[float]] = {s: [] for s in settings}
    requests: dict[str, int] = {s: 0 for s in settings}
    waits: dict[str, dict[str, list[float]]] = {s: {"show": [], "page": []} for s in settings}
    print(
        f"binpack, budget {args.budget}, {args.workers} workers, seed {args.seed}, {args.rounds} rounds, "
        f"{os.cpu_count()} cores; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="clade-bench-live-") as tmp:
        for k in range(args.rounds):
            order = settings[k % len(settings) :] + settings[: k % len(settings)]
            for setting in order:
                rate, made = one_search(
                    setting,
                    Path(tmp) / f"{k}-{setting.replace(' ', '_').replace('/', '')}",
                    args.budget,
                    args.seed,
                    args.workers,
                    waits[setting],
                )
                rates[setting].append(rate)
                requests[setting] += made
                print(f"  round {k + 1} {setting:12s} {rate:6.3f} dev evaluations/s ({made} reader requests)")
    base = statistics.median(rates["alone"]) if rates.get("alone") else None
    print(f"\n{'setting':12s} {'median evals/s':>15s} {'vs alone':>9s} {'show s':>7s} {'page s':>7s}  runs")
    for setting in settings:
        median = statistics.median(rates[setting])
        ratio = f"{median / base:9.3f}" if base else f"{'-':>9s}"
        took = [
            f"{statistics.median(waits[setting][k]):7.2f}" if waits[setting][k] else f"{'-':>7s}"
            for k in ("show", "page")
        ]
        print(f"{setting:12s} {median:15.3f} {ratio} {' '.join(took)}  {', '.join(f'{r:.3f}' for r in rates[setting])}")
    print(
        f"({time.perf_counter() - started:.0f} s; load average now {os.getloadavg()[0]:.2f}; evals/s = dev "
        "evaluations / the search's wall time from its session events; show s / page s = median seconds a "
        "reader waited for one `runs show` / one page request)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
