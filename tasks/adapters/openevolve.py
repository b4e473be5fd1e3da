"""OpenEvolve and ShinkaEvolve task folders.

OpenEvolve: `initial_program.py` (only the EVOLVE-BLOCK is mutable; or
`initial_program.<ext>` in a language engine/lang knows) and `evaluator.py`
with `evaluate(program_path) -> dict`, optionally the cascade
`evaluate_stage1/2/3`; an optional `config.yaml` may set `language` (which
program of the folder is the candidate, when it names one Clade knows),
`evaluator.cascade_evaluation` (default true), `evaluator.cascade_thresholds`
(default [0.5, 0.75, 0.9], OpenEvolve's), `evaluator.timeout` (the sandbox's
wall limit here, default 60 s), `database.feature_dimensions` and
`prompt.system_message` (the task description shown to the model).
The metric is OpenEvolve's fitness: `combined_score` when the evaluator
returns it, else the mean of the numeric metrics that are not MAP-Elites
feature dimensions (its `get_fitness_score`); higher is better.

ShinkaEvolve: `initial.py` (or `initial.<ext>`; a `shinka.yaml` naming
`evo.language` picks among several) and `evaluate.py`, run as
`python evaluate.py --program_path P --results_dir D`, writing
`metrics.json` (the metric is its `combined_score`, higher is better) and
`correct.json` (`{"correct": bool, "error": ...}`: an incorrect program
scores 0, stored `failed_in_evaluator` with the evaluator's figures when
`error` says why, else `bad_output`). Its `private` metrics are dropped;
its `text_feedback` becomes the evaluation's feedback.

An OpenEvolve evaluator that catches the candidate's exception and still
returns metrics (an `error` entry, error artifacts) makes the evaluation
`failed_in_evaluator`: tasks/adapters/caught.py has each format's rule.

Where it runs: the user's evaluator executes the candidate, so it runs INSIDE
the sandbox beside it: the sandbox holds the folder's files (never
`data/private`, hidden files or run outputs), the candidate and a small
runner (`runners/`), which writes the evaluator's metrics to answer.json.
Outside, `grade` checks that answer (a JSON object, a finite metric). A
hostile candidate can therefore forge its metric (it runs in the same
process as the evaluator); it cannot reach anything outside the sandbox.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from tasks.adapters.caught import openevolve_caught, shinka_caught
from tasks.adapters.folder import (
    FolderTask,
    finite_number,
    folder_files,
    read_text,
    short,
)
from tasks.base import Grade, Instance

RUNNERS = Path(__file__).resolve().parent / "runners"
CASCADE_THRESHOLDS = [0.5, 0.75, 0.9]  # OpenEvolve's EvaluatorConfig default


def yaml_config(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        import yaml
    except ImportError:  # PyYAML absent: OpenEvolve's defaults
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - any YAML error is the user's file, said in one line
        raise ValueError(f"{path}: not readable YAML: {short(exc, 200)}") from None
    return data if isinstance(data, dict) else {}


def fitness(metrics: dict, feature_dimensions: Sequence[str] = ()) -> float | None:
    """OpenEvolve's get_fitness_score: combined_score, else the mean of numeric non-feature metrics."""
    if "combined_score" in metrics:
        return finite_number(metrics["combined_score"])

    def number(v) -> bool:  # booleans are flags, not scores (OpenEvolve 0.4's get_fitness_score skips them too)
        return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)

    values = [float(v) for k, v in metrics.items() if k not in feature_dimensions and number(v)]
    if not values:
        values = [float(v) for v in metrics.values() if number(v)]
    return finite_number(sum(values) / len(values)) if values else None


def _summary(metrics: dict, limit: int = 8) -> str:
    shown = [
        f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={short(v, 60)}"
        for k, v in list(metrics.items())[:limit]
        if k != "error"
    ]  # an error message is said apart
    return ", ".join(shown)


def _numbers_only(metrics: dict, limit: int = 60) -> dict:
    return {
        str(k): v
        for k, v in list(metrics.items())[:limit]
        if (isinstance(v, (int, float)) and finite_number(float(v)) is not None) or isinstance(v, bool)
    }


class OpenEvolveTask(FolderTask):
    format = "openevolve"
    runner = "openevolve_runner.py"
    metric_name = "combined_score"

    def __init__(self, root, instances_path=None, target=None) -> None:
        from tasks.adapters import program_file

        config = yaml_config(Path(root) / "config.yaml")
        named = config.get("language") if isinstance(config.get("language"), str) else None
        super().__init__(
            root, program_file(Path(root), "initial_program", named) or "initial_program.py", instances_path, target
        )
        evaluator = config.get("evaluator") or {}
        database = config.get("database") or {}
        self.runner_settings = {
            "program": self.entry_file,
            "cascade_evaluation": bool(evaluator.get("cascade_evaluation", True)),
            "cascade_thresholds": list(evaluator.get("cascade_thresholds") or CASCADE_THRESHOLDS),
        }
        self.feature_dimensions = [str(d) for d in database.get("feature_dimensions") or []]
        timeout = evaluator.get("timeout")
        if isinstance(timeout, (int, float)) and timeout > 0:
            from dataclasses import replace

            self.limits = replace(self.limits, timeout_s=float(timeout), cpu_s=max(1, int(timeout)))
        message = (config.get("prompt") or {}).get("system_message")
        readme = self.root / "README.md"
        if isinstance(message, str) and message.strip() and message.strip() != "system_message":
            self.description = message.strip()
        elif readme.is_file():
            self.description = read_text(readme)
        else:
            self.description = (
                f"Improve the program {self.entry_file}: the task's evaluator.py (OpenEvolve "
                "format) runs it and reports metrics; a higher combined_score is better."
            )
        self._files = folder_files(self.root, exclude=(self.entry_file,))

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        data = self.answer_object(answer)
        if isinstance(data, str):
            return Grade(False, {}, data)
        if "error" in data:
            why = self.explain_missing(short(data["error"]), str(data.get("error_file") or ""))
            return Grade(False, {}, f"the evaluator failed: {why}")
        metrics = data.get("metrics")
        if not isinstance(metrics, dict) or not metrics:
            return Grade(False, {}, "the evaluator returned no metrics")
        artifacts = data.get("artifacts")
        if not isinstance(artifacts, dict):
            artifacts = {}
        caught = openevolve_caught(metrics, artifacts)
        value = fitness(metrics, self.feature_dimensions)
        if value is None and not caught:
            return Grade(False, {}, f"no finite combined_score or numeric metric in {_summary(metrics)}")
        stage, stages = data.get("stage", 0), data.get("stages", 0)
        out = {**({"metric": value} if value is not None else {}), "evaluator": _numbers_only(metrics)}
        if isinstance(stage, int) and stages:
            out["cascade_stage"] = stage
        feedback = _summary(metrics)
        if stages:
            feedback += f" (cascade: stage {stage} of {stages})"
        if isinstance(metrics.get("error"), str) and not caught:  # else the caught error leads the feedback
            feedback += f"; error: {self.explain_missing(short(metrics['error'], 200))}"
        # "error" / "error_message": where OpenEvolve's own examples say why they scored 0 (huawei_2017: no test cases)
        for key in ("stderr", "stage2_stderr", "stage3_stderr", "error", "error_message", "feedback"):
            if artifacts.get(key):
                feedback += f"; {key}: {short(artifacts[key], 200)}"
        if caught:
            return self.caught_grade(out, feedback, self.explain_missing(caught))
        return Grade(True, out, feedback)


SHINKA_CONFIGS = ("shinka.yaml", "shinka.yml")  # a ShinkaEvolve folder's config, either spelling


def shinka_language(root: Path) -> str | None:
    """The language a ShinkaEvolve folder's config names (`evo.language` of shinka.yaml, its EvolutionConfig
    field), if any."""
    for name in SHINKA_CONFIGS:
        evo = yaml_config(root / name).get("evo")
        if isinstance(evo, dict) and isinstance(evo.get("language"), str):
            return evo["language"]
    return None


class ShinkaEvolveTask(FolderTask):
    format = "shinkaevolve"
    runner = "shinka_runner.py"
    metric_name = "combined_score"

    def __init__(self, root, instances_path=None, target=None) -> None:
        from tasks.adapters import program_file

        super().__init__(
            root,
            program_file(Path(root), "initial", shinka_language(Path(root))) or "initial.py",
            instances_path,
            target,
        )
        readme = self.root / "README.md"
        self.description = (
            read_text(readme)
            if readme.is_file()
            else (
                f"Improve the program {self.entry_file}: the task's evaluate.py (ShinkaEvolve format) runs it and "
                "reports metrics; a higher combined_score is better, and the program must stay correct."
            )
        )
        self.runner_settings = {"program": self.entry_file}
        self._files = folder_files(self.root, exclude=(self.entry_file,))

    def grade(self, instance: Instance, answer: bytes) -> Grade:
        data = self.answer_object(answer)
        if isinstance(data, str):
            return Grade(False, {}, data)
        file = str(data.get("error_file") or "")
        if "error" in data:
            return Grade(False, {}, self.explain_missing(short(data["error"]), file))
        metrics, correct = data.get("metrics"), data.get("correct")
        for name, part in (("metrics.json", metrics), ("correct.json", correct)):
            if not isinstance(part, dict):
                return Grade(False, {}, f"{name} must hold a JSON object")
            if "__unreadable__" in part:
                return Grade(False, {}, short(part["__unreadable__"]))
        assert isinstance(metrics, dict) and isinstance(correct, dict)  # else the loop above returned
        caught = shinka_caught(correct)
        if correct.get("correct") is not True and not caught:
            return Grade(False, {}, f"incorrect: {self.explain_missing('correct.json says correct: false', file)}")
        value = finite_number(metrics.get("combined_score"))
        if value is None and not caught:
            return Grade(False, {}, "metrics.json has no finite combined_score")
        public = metrics.get("public")
        if not isinstance(public, dict):
            public = {}
        numbers = {k: v for k, v in metrics.items() if k not in ("public", "private", "text_feedback")}
        out = {
            **({"metric": value} if value is not None else {}),
            "evaluator": _numbers_only({**numbers, **{f"public.{k}": v for k, v in public.items()}}),
        }
        feedback = f"combined_score={value:.6g}" if value is not None else "no finite combined_score"
        if public:
            feedback += f"; {_summary(public)}"
        if metrics.get("text_feedback"):
            feedback += f"; {short(metrics['text_feedback'], 500)}"
        if caught:  # ShinkaEvolve's incorrect program with its why: the evaluator caught a failure
            return self.caught_grade(out, feedback, f"incorrect: {self.explain_missing(short(caught), file)}")
        return Grade(True, out, feedback)
