"""--bootstrap (SIA): a public/private folder without a seed program gets one written from its task.md."""

from __future__ import annotations

import os
import re
import shutil

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from engine.errors import UserError
from engine.front.cli import build_parser
from engine.front.run import run_from_args
from tests.conftest import REPO
from tests.engine.test_search_e2e import only_run, read

MODEL = "openai/gpt-4o-mini"
FIXTURE = REPO / "tests" / "fixtures" / "tasks" / "public_private_regression"
NO_MAIN_CALL = """```python
import csv

def main():
    rows = list(csv.DictReader(open("data/public/test.csv")))
    with open("submission.csv", "w") as fh:
        fh.write("id,y\\n")
        fh.writelines(f"{r['id']},0.0\\n" for r in rows)
```"""
GOOD = (
    NO_MAIN_CALL[:-3]
    + """

if __name__ == "__main__":
    main()
```"""
)


@pytest.fixture
def seedless(tmp_path):
    """The regression fixture without its solution.py, plus a reference template."""
    folder = tmp_path / "task"
    shutil.copytree(FIXTURE, folder)
    (folder / "solution.py").unlink()
    (folder / "reference").mkdir()
    (folder / "reference" / "template.py").write_text("# read train.csv, fit, write submission.csv\n")
    return folder


def run(tmp_path, folder, mock, *extra):
    args = build_parser().parse_args(
        [
            "--task",
            str(folder),
            "--bootstrap",
            "--model",
            MODEL,
            "--budget",
            "6",
            "--workers",
            "1",
            "--sandbox",
            "process",
            "--run-dir",
            str(tmp_path / "runs"),
            "--quiet",
            *extra,
        ]
    )
    return run_from_args(args, llm_mock=mock)


def test_the_seed_is_written_from_task_md_and_a_failed_first_try_is_fed_back(tmp_path, seedless):
    asked = []

    def model(name, messages, attempt):
        if messages[0]["content"].startswith("You write the first version"):
            asked.append(messages)
            return NO_MAIN_CALL if len(asked) == 1 else GOOD  # the first try never calls main()
        line = next(x for x in messages[1]["content"].splitlines() if "fh.writelines(" in x)  # the mutator's
        value = float(re.search(r"\},([0-9.]+)", line).group(1))
        asked.append(None)  # each change different: no duplicate children
        new = line.replace(f"}},{value}", f"}},{value + 0.5 * len(asked)}")
        return f"Change: a constant.\n\nsolution.py\n<<<<<<< SEARCH\n{line}\n=======\n{new}\n>>>>>>> REPLACE\n"

    assert run(tmp_path, seedless, model) == 0
    run_folder = only_run(tmp_path / "runs")
    calls = read(
        run_folder, "SELECT node_id, purpose, request->>'key' FROM llm_calls WHERE purpose = 'bootstrap' ORDER BY id"
    )
    assert calls == [(0, "bootstrap", "bootstrap try 0"), (0, "bootstrap", "bootstrap try 1")]
    first = asked[0][1]["content"]
    assert "Predict y from x" in first and "reference/template.py" in first and "data/public/train.csv" in first
    assert "answers.csv" not in first  # the private answers are never shown
    retry = asked[1][-1]["content"]
    assert "it never calls main()" in retry
    ((description, mutator),) = read(run_folder, "SELECT description, mutator FROM nodes WHERE id = 0")
    assert description == "from the meta-agent, from data/public/task.md (--bootstrap, try 2)" and mutator == "seed"
    assert read(run_folder, "SELECT count(*) FROM evaluations WHERE node_id = 0 AND status = 'ok'")[0][0] >= 1


def test_three_failed_tries_end_in_one_line_and_leave_no_run(tmp_path, seedless):
    with pytest.raises(UserError, match=r"failed validation 3 times \(the last: it never calls main\(\)"):
        run(tmp_path, seedless, lambda name, messages, attempt: NO_MAIN_CALL)
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())


def test_without_bootstrap_or_with_a_seed_the_user_is_told(tmp_path, seedless):
    args = build_parser().parse_args(["--task", str(seedless), "--run-dir", str(tmp_path / "runs")])
    with pytest.raises(UserError, match="has no solution.py: write one, or have the meta-agent write it"):
        run_from_args(args)
    with pytest.raises(UserError, match="has its own seed program"):
        run(tmp_path, FIXTURE, lambda name, messages, attempt: GOOD)
    args = build_parser().parse_args(["--task", str(seedless), "--bootstrap", "--run-dir", str(tmp_path / "runs")])
    with pytest.raises(UserError, match="--bootstrap has the meta-agent write the seed"):
        run_from_args(args)
