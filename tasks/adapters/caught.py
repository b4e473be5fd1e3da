"""What says that a task folder's evaluator ran but caught the candidate's failure.

OpenEvolve's and ShinkaEvolve's evaluators catch the candidate's exception
and still answer: a `combined_score` of 0 with an `error` entry, or
`correct: false` with a message. Clade stores such an evaluation as
`failed_in_evaluator` (a failure, score 0), not `ok`. The conventions read
here, per format:

- OpenEvolve: a non-empty string `error` or `errors` among the metrics (the
  template of its examples/README.md and its examples, e.g.
  function_minimization, return `{"combined_score": 0.0, "error": str(e)}`;
  a number under `error` is a metric, such as a mean error, and
  OpenEvolve's own `{"error": 0.0}` for a failed evaluation never reaches
  a task folder's answer); or an error entry among the artifacts of
  its `EvaluationResult` (`error`, `error_message`, `error_type`,
  `traceback`, `full_traceback`, `failure_stage`, and the runner's
  `stage2_stderr`/`stage3_stderr` for a cascade stage that raised, as
  OpenEvolve's evaluator records them). A plain `stderr` artifact counts
  only when it holds a Python traceback: a warning is not a failure.
- ShinkaEvolve: `correct.json` says `correct: false` with an `error`
  message (its `run_shinka_eval` writes the exception or the validation
  message there); without a message the answer stays `bad_output`.
- metric:value and public/private: the benchmark (or the program) printed
  its result and exited 0, but its stderr holds a Python traceback
  (`Traceback (most recent call last):`), other than the
  `Exception ignored in ...` reports Python prints for errors it swallows
  itself.
"""

from __future__ import annotations

import re

TRACEBACK = "Traceback (most recent call last):"
IGNORED = "Exception ignored"  # Python's report of an error it swallowed (in __del__, at exit): not the program's
ERROR_METRICS = ("error", "errors")
ERROR_ARTIFACTS = (  # most telling first: the message, then its type, then the rest
    "error_message",
    "error",
    "errors",
    "error_type",
    "stage2_stderr",
    "stage3_stderr",
    "full_traceback",
    "traceback",
    "failure_stage",
)
EMPTY = {"", "none", "null", "[]", "{}", "()", "false"}  # what a runner's str() of "no error" looks like
_FRAME = re.compile(r'^\s+File "[^"]*", line \d+')


def said(value) -> str:
    """`value` as an error message when it is one (a non-empty string, or a non-empty list of them), else ''."""
    if isinstance(value, (list, tuple)):
        return "; ".join(part for part in (said(v) for v in value) if part)
    if not isinstance(value, str) or value.strip().lower() in EMPTY:
        return ""
    return value.strip()


def python_traceback(text: str) -> str:
    """The exception line of the last Python traceback in `text` (one line), else ''."""
    lines = text.splitlines()
    starts = [k for k, line in enumerate(lines) if line.strip() == TRACEBACK]
    for start in reversed(starts):
        if start and lines[start - 1].startswith(IGNORED):
            continue
        after = [line for line in lines[start + 1 :] if line.strip()]
        body = [line for line in after if not line[:1].isspace() and not _FRAME.match(line)]
        return (body[0] if body else "a Python traceback").strip()[:300]
    return ""


def first_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:limit] if lines else ""


def openevolve_caught(metrics: dict, artifacts: dict) -> str:
    """The error an OpenEvolve evaluator reported while still returning metrics, one line; '' if none."""
    for key in ERROR_METRICS:
        message = said(metrics.get(key))
        if message:
            return first_line(message)
    for key in ERROR_ARTIFACTS:
        message = said(artifacts.get(key))
        if not message:
            continue
        if key.endswith("traceback"):
            return python_traceback(message) or first_line(message)
        return first_line(message) if key != "failure_stage" else f"failed at {first_line(message)}"
    for key, value in artifacts.items():  # stderr, stage1_stderr, ...: a failure only with a traceback in it
        if str(key).endswith("stderr") and isinstance(value, str):
            caught = python_traceback(value)
            if caught:
                return caught
    return ""


def shinka_caught(correct: dict) -> str:
    """The message of an incorrect ShinkaEvolve answer (`correct: false` with an `error`), one line; ''
    when it is correct or says no why."""
    if correct.get("correct") is True:
        return ""
    return first_line(said(correct.get("error")))
