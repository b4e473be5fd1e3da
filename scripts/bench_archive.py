"""Benchmarks of what reads a run's archive, on synthetic archives; each section prints its goal.

    python scripts/bench_archive.py                  # every section
    python scripts/bench_archive.py --only plot      # one section
    python scripts/bench_archive.py --nodes 2000 --repeats 3 --dir /some/disk

Sections (one function each; `main` calls them in turn):
- plot (`bench_plot`): the lineage plot of a synthetic archive (engine/plots/
  synthetic.py: an HGM-like tree, 10 % invalid and 4 % failed children, about
  2 dev evaluations per node, one priced LLM call per expansion) at 10 nodes
  and at --nodes (default 2,000): `lineage_data` (read + layout), render to
  PNG, render to SVG (with the per-node tooltips), medians over --repeats in
  this process (matplotlib already imported: its import is timed apart), and
  once end to end as a user runs it (`python scripts/plot_lineage.py`, a new
  process). Goal: the 2,000-node plot in under 20 s.
- export (`bench_export`): `python -m engine.snapshot export` of an archive
  of 100,000 evaluations (`bulk_archive`: 5,000 nodes, 20 dev instances, one
  LLM call per expansion, stdout tails and metrics per evaluation), in this
  process (median of --repeats) and once end to end in a new process.
  Goal: under 5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PLOT_GOAL_S = 20.0
EXPORT_GOAL_S = 5.0


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ----- section: plot (lineage plot at 10 and 2,000 nodes) ---------------------------------------------
def bench_plot(workdir: Path, n_nodes: int = 2000, repeats: int = 3) -> dict:
    """Time lineage_data + PNG + SVG on synthetic archives of 10 and `n_nodes` nodes; print and return them."""
    from engine.plots.synthetic import synthetic_archive

    start = time.perf_counter()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    from engine.plots.lineage import lineage_data
    from engine.plots.lineage_render import render_lineage

    print(f"plot: matplotlib {matplotlib.__version__} import {time.perf_counter() - start:.2f} s (once per process)")
    results = {}
    for size in dict.fromkeys((10, n_nodes)):
        archive = synthetic_archive(workdir / f"plot-{size}.duckdb", n_nodes=size, seed=0)
        data = lineage_data(archive)
        counts = {s: sum(1 for n in data.nodes if n.status == s) for s in ("valid", "invalid", "failed")}
        evals = sum(n.n_evals for n in data.nodes)
        png, svg = workdir / f"lineage-{size}.png", workdir / f"lineage-{size}.svg"
        t_data = _median_time(partial(lineage_data, archive), repeats)
        t_png = _median_time(partial(render_lineage, data, [png]), repeats)
        t_svg = _median_time(partial(render_lineage, data, [svg]), repeats)
        total = t_data + t_png + t_svg
        env = dict(os.environ, PYTHONPATH=str(REPO))
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                str(REPO / "scripts" / "plot_lineage.py"),
                str(archive),
                "--out",
                str(workdir / f"cli-{size}"),
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        t_cli = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"plot_lineage.py failed: {proc.stderr.strip()}")
        verdict = "met" if t_cli < PLOT_GOAL_S and total < PLOT_GOAL_S else "NOT met"
        print(
            f"plot {size:>5} nodes ({counts['valid']} valid, {counts['invalid']} invalid, {counts['failed']} "
            f"failed; {evals} dev evaluations; {data.fade_below and sum(n.faded for n in data.nodes)} faded):"
        )
        print(
            f"  lineage_data {t_data:.3f} s, png {t_png:.2f} s "
            f"({png.stat().st_size // 1024} KB), svg {t_svg:.2f} s "
            f"({svg.stat().st_size // 1024} KB); data + png + svg {total:.2f} s "
            f"(median of {repeats})"
        )
        print(
            f"  end to end, python scripts/plot_lineage.py (new process, png + svg): {t_cli:.2f} s; "
            f"goal < {PLOT_GOAL_S:g} s: {verdict}"
        )
        results[size] = {"data_s": t_data, "png_s": t_png, "svg_s": t_svg, "total_s": total, "cli_s": t_cli}
    return results


# ----- section: export (snapshot of 100,000 evaluations) -------------------------------------------------
def bulk_archive(path: Path, n_evaluations: int = 100_000, evals_per_node: int = 20, n_dev: int = 20) -> Path:
    """A finished archive of `n_evaluations` dev evaluations written by a few INSERT ... SELECT FROM range()
    (about a second at 100,000). Shapes as a real run's: one node per `evals_per_node` evaluations (a random
    earlier parent, 10 % invalid), a 2 KB agent file and a diff per node, one LLM call per expansion with a
    3 KB prompt and a 600-byte answer, a stdout tail of 160 to 300 characters and JSON metrics per
    evaluation, one event per evaluation and per expansion. Texts carry hashes, so they compress like
    real ones (not like one repeated line)."""
    from archive import Archive

    n_nodes = max(1, n_evaluations // evals_per_node)
    with Archive.create(path, "bench-export", {"task": "binpack", "budget": n_evaluations}, 0) as archive:
        q = archive.query
        q("SET enable_progress_bar = false")
        q("BEGIN")
        q(
            "INSERT INTO instances (id, split, data) SELECT 'dev' || i, 'dev', '{\"capacity\": 150}' "
            "FROM range(?) t(i)",
            [n_dev],
        )
        q(
            "INSERT INTO nodes (id, run_id, parent_id, depth, status, created_at, mutator, model, diff, code_hash, "
            "reason, description) SELECT i, 'bench-export', CASE WHEN i = 0 THEN NULL ELSE "
            "floor(random() * i)::BIGINT END, "
            "0, CASE WHEN i > 0 AND i % 10 = 0 THEN 'invalid' ELSE 'valid' END, "
            "TIMESTAMP '2025-01-01' + to_seconds(i), CASE WHEN i = 0 THEN 'seed' ELSE 'llm' END, 'openai/gpt-4o-mini', "
            "'--- a/agent.py\n+++ b/agent.py\n@@ -8,4 +8,4 @@\n-    return bins - item  # ' || md5(i::VARCHAR) || "
            "'\n+    return -(bins - item) ** 2 + ' || (i % 97) || ' * bins  # ' || md5((i + 1)::VARCHAR), "
            "md5('code' || i), '', 'change ' || i || ': ' || md5('d' || i) FROM range(?) t(i)",
            [n_nodes],
        )
        q(
            "INSERT INTO blobs (hash, content) SELECT md5('code' || i), 'import numpy as np\n\n' || "
            "string_agg(md5(i::VARCHAR || '-' || j::VARCHAR), '\n') FROM range(?) t(i), range(60) s(j) GROUP BY i",
            [n_nodes],
        )
        q(
            "INSERT INTO node_files (node_id, path, hash) SELECT i, 'agent.py', md5('code' || i) FROM range(?) t(i)",
            [n_nodes],
        )
        q(
            'INSERT INTO evaluations (node_id, instance_id, split, "repeat", score, metrics, status, runtime_s, '
            "stdout_tail, stderr_tail, feedback, worker, started_at, finished_at) SELECT i // ?, "
            "'dev' || (i % ?), 'dev', 0, random(), "
            "'{\"bins\": ' || (58 + i % 7) || ', \"l1\": 56, \"excess\": ' || round(random() * 10, 3) || '}', "
            "CASE WHEN i % 50 = 0 THEN 'error' ELSE 'ok' END, 0.2 + random(), "
            "'packed 120 items into ' || (58 + i % 7) || ' bins\n' || repeat(md5(i::VARCHAR) || '\n', 4 + i % 5), "
            "CASE WHEN i % 50 = 0 THEN 'Traceback (most recent call last):\n  ValueError: ' || md5(i::VARCHAR) "
            "ELSE '' END, 'used ' || (58 + i % 7) || ' bins, L1 bound 56', 'w' || (i % 2), "
            "TIMESTAMP '2025-01-01' + to_milliseconds(i * 500), TIMESTAMP '2025-01-01' + "
            "to_milliseconds(i * 500 + 400) "
            "FROM range(?) t(i)",
            [evals_per_node, n_dev, n_evaluations],
        )
        q(
            "INSERT INTO llm_calls (id, node_id, purpose, model, request_hash, request, response, tokens_in, "
            "tokens_out, cost_usd, latency_s, error, created_at) SELECT i, floor(random() * "
            "i)::BIGINT, 'mutate', 'openai/gpt-4o-mini', md5('r' || i), "
            "json_object('model', 'openai/gpt-4o-mini', 'key', 'parent 0 child ' || i, 'messages', "
            "json_array(json_object('role', 'user', 'content', repeat(md5('p' || i) || ' ', 90)))), "
            "json_object('text', repeat(md5('a' || i) || ' ', 18)), 1146, 230, 0.0004, 2.5, NULL, "
            "TIMESTAMP '2025-01-01' + to_seconds(i) FROM range(1, ?) t(i)",
            [n_nodes],
        )
        q(
            'INSERT INTO events (seq, "at", kind, node_id, detail) '
            "SELECT i + 1, TIMESTAMP '2025-01-01' + to_milliseconds(i * 400), "
            "CASE WHEN i % ? = 0 THEN 'expand' ELSE 'evaluate' END, i // ?, "
            "'{\"instance\": \"dev' || (i % ?) || '\", \"theta\": ' || round(random(), 4) || '}' FROM range(?) t(i)",
            [evals_per_node + 1, evals_per_node + 1, n_dev, n_evaluations + n_nodes],
        )
        q("COMMIT")
        archive.set_status("finished")
    return path


def bench_export(workdir: Path, n_evaluations: int = 100_000, repeats: int = 3) -> dict | None:
    """Time `python -m engine.snapshot export` of an archive holding `n_evaluations` evaluations: the export in
    this process (median of `repeats`) and once end to end as a user runs it (a new process)."""
    import shutil

    from archive.snapshot import export_snapshot

    start = time.perf_counter()
    archive = bulk_archive(workdir / "bench.duckdb", n_evaluations)
    built = time.perf_counter() - start
    counter = iter(range(10**6))

    def export() -> None:
        dest = workdir / f"snap-{next(counter)}"
        export_snapshot(archive, dest)
        shutil.rmtree(dest)

    t_export = _median_time(export, repeats)
    dest = workdir / "snap-cli"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "engine.snapshot", "export", str(archive), str(dest)],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        check=False,
    )
    t_cli = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"python -m engine.snapshot export failed: {proc.stderr.strip()}")
    import json

    manifest = json.loads((dest / "manifest.json").read_text())
    rows = {t: e["rows"] for t, e in manifest["tables"].items()}
    size = sum(f.stat().st_size for f in dest.iterdir())
    verdict = "met" if max(t_export, t_cli) < EXPORT_GOAL_S else "NOT met"
    print(
        f"export {rows['evaluations']:,} evaluations ({rows['nodes']:,} nodes, {rows['llm_calls']:,} LLM calls, "
        f"{rows['events']:,} events; archive {archive.stat().st_size / 1e6:.1f} MB, built in {built:.1f} s):"
    )
    print(
        f"  export_snapshot {t_export:.2f} s (median of {repeats}); end to end, python -m engine.snapshot export "
        f"(new process) {t_cli:.2f} s; snapshot {size / 1e6:.1f} MB; goal < {EXPORT_GOAL_S:g} s: {verdict}"
    )
    return {"export_s": t_export, "cli_s": t_cli, "bytes": size, "rows": rows}


SECTIONS: dict[str, Callable[..., dict | None]] = {"plot": bench_plot, "export": bench_export}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", choices=sorted(SECTIONS), help="run one section")
    p.add_argument("--nodes", type=int, default=2000, help="nodes of the large lineage plot (default: 2000)")
    p.add_argument("--repeats", type=int, default=3, help="timed repeats per figure (median; default: 3)")
    p.add_argument("--dir", help="where the synthetic archives go (default: a temporary folder)")
    args = p.parse_args(argv)
    print(f"os.cpu_count() {os.cpu_count()}, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        if args.only in (None, "plot"):
            (work / "plot").mkdir()
            bench_plot(work / "plot", args.nodes, args.repeats)
        if args.only in (None, "export"):
            (work / "export").mkdir()
            bench_export(work / "export", repeats=args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
