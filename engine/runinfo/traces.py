"""Training traces: one record per child a mutator made, from a run's archive, as JSON lines or Parquet.

    python -m engine.runs export RUN --traces traces.jsonl [--valid-only] [--no-holdout] [--force]

A record holds what a model was asked and what it answered (the expansion's last attempt, from `llm_calls`),
the parent's and the child's code and the diff between them, what became of the child (status, reason, its
dev and holdout means, the change against its parent's dev mean) and what the expansion cost. The fields
are documented in docs/guide/traces.md. The idea follows OpenEvolve's evolution traces
(`openevolve/evolution_trace.py`), which log prompt, answer, parent and child programs and the score change
for reinforcement-learning data; ThetaEvolve (arXiv 2511.23473) trains a model on such traces.

Reads go through named Archive methods (archive/reads_traces.py); the archive is opened read-only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archive import ArchiveError
from archive.records import LLMCallRecord, NodeStats
from engine.whole_file import written_whole

FORMATS = (".jsonl", ".parquet")
HOLDOUT_FIELDS = ("holdout_mean",)


@dataclass(frozen=True)
class TraceOptions:
    valid_only: bool = False  # only children that are valid and evaluated ok on every dev evaluation
    holdout: bool = True  # False: no holdout score in any record (data to train on must not see it)


def check_target(file: str | Path, force: bool) -> Path:
    """The file to write, or ArchiveError in one line: an unknown extension, a missing folder, or a file that
    is there already (kept unless `force`)."""
    path = Path(file)
    if path.suffix not in FORMATS:
        raise ArchiveError(f"{file}: a trace file ends in .jsonl or .parquet")
    if not path.parent.is_dir():
        raise ArchiveError(f"{file}: no folder {path.parent} to write it in")
    if path.is_dir():
        raise ArchiveError(f"{file} is a folder")
    if path.exists() and not force:
        raise ArchiveError(f"{file} is there already (--force replaces it)")
    return path


def _answered(calls: Sequence[LLMCallRecord]) -> LLMCallRecord | None:
    """The call whose conversation made the child: the last attempt that returned (else the last attempt sent);
    a `diagnose` call plans, and is not it."""
    attempts = [c for c in calls if " attempt " in str(c.request.get("key", ""))]
    returned = [c for c in attempts if c.error is None]
    if returned:
        return returned[-1]
    return attempts[-1] if attempts else None


def _messages(call: LLMCallRecord | None) -> list[dict[str, str]] | None:
    if call is None:
        return None
    out = []
    for message in call.request.get("messages") or []:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        out.append({"role": str(message.get("role", "")), "content": text})
    return out


def _cost(calls: Sequence[LLMCallRecord]) -> float | None:
    """Dollars of the expansion's calls; None when a call that returned has no known price."""
    if any(c.cost_usd is None and c.error is None for c in calls):
        return None
    return float(sum(c.cost_usd or 0.0 for c in calls))


def _mean(stats: dict[int, NodeStats], node: int) -> float | None:
    found = stats.get(node)
    return None if found is None else found.mean


def trace_records(run: str | Path, options: TraceOptions = TraceOptions()) -> list[dict[str, Any]]:
    """The run's trace records, children in id order (see docs/guide/traces.md for each field)."""
    from engine.runinfo.reading import open_read_only

    with open_read_only(run) as archive:
        run_id = archive.run_id
        children = archive.mutated_children()
        calls = archive.expansion_calls()
        stats = archive.dev_node_stats()
        holdout = archive.holdout_means() if options.holdout else {}
        files = archive.files_of_nodes()
    records = []
    for node, parent, status, reason, mutator, model, diff, description, key in children:
        dev = stats.get(node)
        if options.valid_only and (status != "valid" or dev is None or dev.n_failed > 0):
            continue
        made_by = calls.get(key, []) if key else []
        answered = _answered(made_by)
        response = answered.response if answered is not None else None
        dev_mean, parent_mean = _mean(stats, node), _mean(stats, parent)
        record: dict[str, Any] = {
            "run_id": run_id,
            "node_id": node,
            "parent_id": parent,
            "mutator": mutator,
            "model": model or (answered.model if answered is not None else None),
            "key": key,
            "messages": _messages(answered),
            "answer": response.get("text") if isinstance(response, dict) else None,
            "parent_files": files.get(parent, {}),
            "child_files": files.get(node, {}),
            "diff": diff,
            "description": description,
            "status": status,
            "reason": reason,
            "dev_mean": dev_mean,
            "dev_evaluations": 0 if dev is None else dev.n,
            "parent_dev_mean": parent_mean,
            "delta": None if dev_mean is None or parent_mean is None else dev_mean - parent_mean,
            "calls": len(made_by),
            "tokens_in": sum(c.tokens_in for c in made_by),
            "tokens_out": sum(c.tokens_out for c in made_by),
            "cost_usd": _cost(made_by),
        }
        if options.holdout:
            record["holdout_mean"] = holdout.get(node)
        records.append(record)
    return records


def _parquet_schema(holdout: bool):
    import pyarrow as pa

    fields = [
        ("run_id", pa.string()),
        ("node_id", pa.int64()),
        ("parent_id", pa.int64()),
        ("mutator", pa.string()),
        ("model", pa.string()),
        ("key", pa.string()),
        ("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("answer", pa.string()),
        ("parent_files", pa.map_(pa.string(), pa.string())),
        ("child_files", pa.map_(pa.string(), pa.string())),
        ("diff", pa.string()),
        ("description", pa.string()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("dev_mean", pa.float64()),
        ("dev_evaluations", pa.int64()),
        ("parent_dev_mean", pa.float64()),
        ("delta", pa.float64()),
        ("calls", pa.int64()),
        ("tokens_in", pa.int64()),
        ("tokens_out", pa.int64()),
        ("cost_usd", pa.float64()),
    ]
    if holdout:
        fields.append(("holdout_mean", pa.float64()))
    return pa.schema(fields)


def _write_to(path: Path, records: list[dict[str, Any]], holdout: bool) -> None:
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = [
            {**r, "parent_files": list(r["parent_files"].items()), "child_files": list(r["child_files"].items())}
            for r in records
        ]
        pq.write_table(pa.Table.from_pylist(rows, schema=_parquet_schema(holdout)), path)
        return
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def export_traces(run: str | Path, file: str | Path, options: TraceOptions, force: bool = False) -> int:
    """Write the run's trace records to `file` (.jsonl or .parquet); how many. The file appears whole or not
    at all: written beside it under another name, then renamed."""
    target = check_target(file, force)
    records = trace_records(run, options)
    try:
        with written_whole(target) as scratch:
            _write_to(scratch, records, options.holdout)
    except OSError as exc:  # a full disk, a folder the user may not write in
        raise ArchiveError(f"{file}: could not write it ({exc.strerror or exc})") from None
    return len(records)
