"""Clade's runner for an OpenEvolve task folder; it runs INSIDE the sandbox, beside the candidate program.

It does what OpenEvolve's evaluator does with `evaluator.py`: load it (its
folder first on sys.path), then, when cascade evaluation is on and the module
defines `evaluate_stage1`, run stage 1, go on to stage 2 only if stage 1
passes the first threshold, and to stage 3 only if the merged metrics pass
the second; otherwise call `evaluate(program_path)`. A dict or an object with
`.metrics` (OpenEvolve's EvaluationResult) is accepted. The metrics, the stage
reached and the artifacts go to answer.json; the engine checks them outside.
Standalone: the standard library only. Settings come from clade_task.json.
"""

import importlib.util
import json
import math
import os
import sys
import traceback


def numeric(value):
    return isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value))


def as_result(result):
    """(metrics, artifacts) from a dict or an EvaluationResult-like object."""
    if isinstance(result, dict):
        return dict(result), {}
    metrics = getattr(result, "metrics", None)
    if isinstance(metrics, dict):
        artifacts = getattr(result, "artifacts", None)
        return dict(metrics), dict(artifacts) if isinstance(artifacts, dict) else {}
    raise TypeError(f"the evaluator returned {type(result).__name__}, not a dict of metrics")


def passes(metrics, threshold):
    """OpenEvolve's threshold rule: combined_score if numeric, else the mean of numeric metrics but 'error'."""
    if not metrics:
        return False
    score = metrics.get("combined_score")
    if isinstance(score, (int, float)):
        return float(score) >= threshold
    values = [float(v) for k, v in metrics.items() if k != "error" and numeric(v)]
    return bool(values) and sum(values) / len(values) >= threshold


def merge(*parts):
    """Numeric metrics of each stage, later stages winning, as OpenEvolve merges them."""
    out = {}
    for metrics in parts:
        out.update({k: float(v) for k, v in metrics.items() if k != "error" and isinstance(v, (int, float))})
    return out


def jsonable(mapping, limit=100):
    out: dict[str, object] = {}  # a local annotation: never evaluated, whatever the job's Python
    for key, value in list(mapping.items())[:limit]:
        if isinstance(value, (bool, int, float)) or value is None:
            out[str(key)] = value
        else:
            out[str(key)] = str(value)[:2000]
    return out


def last_line(exc):
    return f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:500]


def failed_file(exc, here):
    """The job's own file (evaluator.py, the program) where `exc` was raised, innermost first; '' if none."""
    mine = os.path.abspath(__file__)
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.abspath(frame.filename)
        if os.path.dirname(path) == here and path != mine:
            return os.path.basename(path)
    return ""


def evaluate(module, program, settings):
    """(metrics, artifacts, stage reached, stages defined)."""
    thresholds = list(settings.get("cascade_thresholds") or [])
    if not (settings.get("cascade_evaluation", True) and hasattr(module, "evaluate_stage1")):
        metrics, artifacts = as_result(module.evaluate(program))
        return metrics, artifacts, 0, 0
    has2, has3 = hasattr(module, "evaluate_stage2"), hasattr(module, "evaluate_stage3")
    stages = 1 + int(has2) + int(has2 and has3)
    metrics, artifacts = as_result(module.evaluate_stage1(program))
    if not thresholds or not passes(metrics, thresholds[0]) or not hasattr(module, "evaluate_stage2"):
        return metrics, artifacts, 1, stages
    try:
        m2, a2 = as_result(module.evaluate_stage2(program))
    except Exception as exc:  # noqa: BLE001 - OpenEvolve keeps stage 1's result
        metrics["stage2_passed"] = 0.0
        artifacts.update({"stage2_stderr": last_line(exc), "failure_stage": "stage2"})
        return metrics, artifacts, 1, stages
    merged, artifacts = merge(metrics, m2), {**artifacts, **a2}
    if len(thresholds) < 2 or not passes(merged, thresholds[1]) or not hasattr(module, "evaluate_stage3"):
        return merged, artifacts, 2, stages
    try:
        m3, a3 = as_result(module.evaluate_stage3(program))
    except Exception as exc:  # noqa: BLE001 - and stage 2's
        merged["stage3_passed"] = 0.0
        artifacts.update({"stage3_stderr": last_line(exc), "failure_stage": "stage3"})
        return merged, artifacts, 2, stages
    return merge(merged, m3), {**artifacts, **a3}, 3, stages


def main():
    with open("clade_task.json") as fh:
        settings = json.load(fh)
    here = os.getcwd()
    sys.path.insert(0, here)
    program = os.path.join(here, settings["program"])
    answer = {}
    try:
        spec = importlib.util.spec_from_file_location("evaluation_module", os.path.join(here, "evaluator.py"))
        assert spec is not None and spec.loader is not None  # a .py file always has one
        module = importlib.util.module_from_spec(spec)
        sys.modules["evaluation_module"] = module
        spec.loader.exec_module(module)
        metrics, artifacts, stage, stages = evaluate(module, program, settings)
        answer = {"metrics": jsonable(metrics), "artifacts": jsonable(artifacts, 20), "stage": stage, "stages": stages}
    except Exception as exc:  # noqa: BLE001 - any failure of the evaluator is the answer
        traceback.print_exc()
        answer = {"error": last_line(exc)}
        if isinstance(exc, ImportError):  # the engine says which Python lacks the module, and what to do
            answer["error_file"] = failed_file(exc, here)
    with open("answer.json", "w") as fh:
        json.dump(answer, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
