"""The README's commands run as a user types them, and exit 0.

What runs. Every line of a ``` block with no language (or bash, sh, shell) that runs `python -m
engine.search`, `python -m engine.runs`, `python -m engine.snapshot`, `python -m engine.report` or
`python scripts/...`; a line `a && b` is split and only its parts that run one of these are kept (`pip
install` and `pytest` are not run). Then every ```sql block, through `python -m engine.runs sql RUN
"<the block>"` on the most recent run the commands made. Inline commands (in tables and prose) are not
run. The commands run in README order, each with its line number in its test id, in one shared temporary
folder (the workspace, the cwd of every command; it holds copies of scripts/ and tests/fixtures/, and the
checkout is on PYTHONPATH): runs/, snapshots/, plots/ and the files the commands write go there, never into
the checkout, and a later command (of the same block or a later one) uses the runs an earlier one made.

Skipped (the reason is in the test id and in the skip message):
- a line with `--model`, `--agent-model` or `OPENAI_API_KEY`: it needs a model and its key;
- a line with `--replay`: the README's replays a model run (made by the `--model` lines above it);
  tests/engine/loop/test_replay.py runs replays against a stub server.

Rewrites, made by `rewrite()` and shown in the failure message of each command:
1. Budgets: `--budget N` becomes `--budget 8` (SMALL_BUDGET); in a command that continues a run
   (`--resume`, `--resume-from`) `--budget 16` (RESUME_BUDGET), so that work is left after the 8 spent.
2. A new binpack search (`python -m engine.search` with no `--task` or `--task binpack`, and no `--resume`,
   `--resume-from` or `--replay`) gets `--instances instances.json`: 4 dev and 2 holdout instances of 120
   items (tests/conftest.py's small_instances) instead of 16 + 16 of 500 to 1,000 items.
3. Time: every `python -m engine.search` gets `--time-limit 60` (TIME_LIMIT: the engine stops new work
   then and still ends cleanly), and every command is killed after 120 s (WALL_LIMIT), which fails it.
4. Placeholders: an optional argument `[x]` becomes `x`, with `..` dropped (`[runs]` -> `runs`, `[<c>..]`
   -> `<c>`); `runs/<name>` and a bare `<name>` (`<run-id>`, `<run>`, `<a>`, ...) become `runs/<id>`, the
   folder of a run made earlier in this test. A command's distinct placeholders take distinct runs, the
   last one named the most recent: `compare <a> <b> <c>` gets the three most recent runs, oldest first.
   When fewer runs exist than a command names (the first commands, or one run alone with -k), the test
   makes the missing ones first: `python -m engine.search --budget 8 --seed K --instances instances.json`.
5. A comment (`#` after a space, outside quotes) is dropped.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, small_instances

README = REPO / "README.md"
SMALL_BUDGET = 8
RESUME_BUDGET = 16
TIME_LIMIT = 60
WALL_LIMIT = 120
RUNS = re.compile(r"python3? -m engine\.(search|runs|snapshot|report)\b|python3? scripts/")
SKIPS = (
    (re.compile(r"--model\b|--agent-model\b|OPENAI_API_KEY"), "needs a model and its API key"),
    (
        re.compile(r"--replay\b"),
        ("replays a model run (the --model runs above it need a key); tests/engine/loop/test_replay.py covers replay"),
    ),
)


@dataclass(frozen=True)
class Command:
    line: int  # in README.md
    block: int  # the ``` block's first line
    text: str  # as the README writes it, comment dropped
    skip: str | None  # why it is not run

    @property
    def id(self) -> str:
        shown = self.text if len(self.text) <= 90 else self.text[:87] + "..."
        return f"L{self.line} {shown}" + (f" [SKIPPED: {self.skip}]" if self.skip else "")


def drop_comment(line: str) -> str:
    """`cmd  # why` -> `cmd`: a `#` at the start or after whitespace, outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def blocks(text: str, languages: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line of the opening fence, body) of each ``` block whose language is one of `languages`."""
    found = []
    for m in re.finditer(r"^```(\w*)[ \t]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        if m.group(1) in languages:
            found.append((text[: m.start()].count("\n") + 1, m.group(2)))
    return found


def readme_commands(text: str | None = None) -> list[Command]:
    text = README.read_text() if text is None else text
    commands = []
    for start, body in blocks(text, ("", "bash", "sh", "shell")):
        for offset, raw in enumerate(body.splitlines(), 1):
            line = drop_comment(raw)
            for part in (p.strip() for p in line.split("&&")):
                if RUNS.match(part):
                    skip = next((why for pattern, why in SKIPS if pattern.search(part)), None)
                    commands.append(Command(start + offset, start, part, skip))
    return commands


def readme_sql(text: str | None = None) -> list[tuple[int, str]]:
    return blocks(README.read_text() if text is None else text, ("sql",))


# ----- the rewrite --------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"(?:runs/)?<([\w-]+)>")


def placeholders(command: str) -> list[str]:
    """The distinct placeholder names of a command (after its optional brackets are opened), in order."""
    names: list[str] = []
    for name in PLACEHOLDER.findall(open_brackets(command)):
        if name not in names:
            names.append(name)
    return names


def open_brackets(command: str) -> str:
    return re.sub(r"\[([^\]\s]*?)(?:\.\.)?\]", r"\1", command)


def rewrite(command: str, runs: list[str]) -> str:
    """The README's command as the test runs it (rules 1 to 4 of the module docstring); `runs`: the run
    folders made so far (`runs/<id>`), oldest first."""
    is_search = bool(re.match(r"python3? -m engine\.search\b", command))
    continues = bool(re.search(r"--resume(-from)?\b", command))
    out = re.sub(r"--budget\s+\d+", f"--budget {RESUME_BUDGET if continues else SMALL_BUDGET}", command)
    if is_search:
        added = [f"--time-limit {TIME_LIMIT}"]
        task = re.search(r"--task\s+(\S+)", command)
        if not continues and "--replay" not in command and (task is None or task.group(1) == "binpack"):
            added.append("--instances instances.json")
        out = re.sub(r"^(python3? -m engine\.search)", r"\1 " + " ".join(added), out)
    out = open_brackets(out)
    names = placeholders(command)
    if len(runs) < len(names):
        raise ValueError(f"{command!r} names {len(names)} runs; {len(runs)} made")
    chosen = dict(zip(names, runs[len(runs) - len(names) :]))
    return PLACEHOLDER.sub(lambda m: chosen[m.group(1)], out)


# ----- the workspace ----------------------------------------------------------------------------------


class Workspace:
    """The temporary folder every command runs in, and the runs made there so far (oldest first)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        shutil.copytree(REPO / "scripts", root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(
            REPO / "tests" / "fixtures", root / "tests" / "fixtures", ignore=shutil.ignore_patterns("__pycache__")
        )
        small_instances(root / "instances.json")
        bin_dir = root / ".bin"  # `python` is this interpreter, whatever PATH says
        bin_dir.mkdir()
        (bin_dir / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        (bin_dir / "python").chmod(0o755)
        self.env = dict(
            os.environ,
            PYTHONPATH=str(REPO),
            COLUMNS="200",
            MPLBACKEND="Agg",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        )
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            self.env.pop(key, None)
        self.runs: list[str] = []
        self.extra = 0

    def _run_folders(self) -> set[str]:
        folder = self.root / "runs"
        return {p.name for p in folder.iterdir() if (p / "archive.duckdb").exists()} if folder.is_dir() else set()

    def shell(self, command: str) -> subprocess.CompletedProcess:
        before = self._run_folders()
        out = subprocess.run(
            ["bash", "-c", command],
            check=False,
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=WALL_LIMIT,
        )
        made = self._run_folders() - before
        self.runs += sorted(f"runs/{name}" for name in made)
        return out

    def ensure_runs(self, n: int) -> None:
        """At least n runs: the missing ones are made by small searches of their own, side by side (distinct
        seeds, so distinct run ids), added oldest first."""
        missing = n - len(self.runs)
        if missing <= 0:
            return
        before = self._run_folders()
        procs = []
        for _ in range(missing):
            self.extra += 1
            command = (
                f"python -m engine.search --budget {SMALL_BUDGET} --seed {self.extra} --quiet "
                f"--instances instances.json --time-limit {TIME_LIMIT}"
            )
            procs.append(
                (
                    command,
                    subprocess.Popen(
                        ["bash", "-c", command],
                        cwd=self.root,
                        env=self.env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    ),
                )
            )
        for command, proc in procs:
            out, err = proc.communicate(timeout=WALL_LIMIT)
            assert proc.returncode == 0, f"ran: {command}\n{out[-2000:]}{err[-2000:]}"
        made = self._run_folders() - before
        assert len(made) == missing, made
        self.runs += sorted(f"runs/{name}" for name in made)

    def run(self, readme_command: str) -> tuple[str, subprocess.CompletedProcess]:
        self.ensure_runs(len(placeholders(readme_command)))
        command = rewrite(readme_command, self.runs)
        return command, self.shell(command)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("readme"))


def _report(command: str, out: subprocess.CompletedProcess) -> str:
    return f"ran: {command}\nexit {out.returncode}\nstdout: {out.stdout[-3000:]}\nstderr: {out.stderr[-3000:]}"


COMMANDS = readme_commands()


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [pytest.param(c, id=c.id, marks=[pytest.mark.skip(reason=c.skip)] if c.skip else []) for c in COMMANDS]
)
def test_readme_command_exits_0(workspace, command):
    ran, out = workspace.run(command.text)
    assert out.returncode == 0, _report(ran, out)
    assert "Traceback" not in out.stderr, _report(ran, out)


@pytest.mark.slow
@pytest.mark.parametrize("sql", [pytest.param(body, id=f"L{line} sql block") for line, body in readme_sql()])
def test_readme_sql_block_runs_through_engine_runs_sql(workspace, sql):
    workspace.ensure_runs(1)
    command = ["python", "-m", "engine.runs", "sql", workspace.runs[-1], sql]
    out = subprocess.run(
        command, check=False, cwd=workspace.root, env=workspace.env, capture_output=True, text=True, timeout=WALL_LIMIT
    )
    assert out.returncode == 0, _report(shlex.join(command), out)
    assert re.search(r"^\d+ rows?$", out.stdout, re.MULTILINE), _report(shlex.join(command), out)  # a table was printed


# ----- what the README promises about them ------------------------------------------------------------


def test_the_readme_has_the_commands_this_test_runs():
    ran = [c for c in COMMANDS if not c.skip]
    assert len(ran) >= 12 and len(readme_sql()) >= 6
    for needed in (
        "python -m engine.search",
        "python -m engine.runs list",
        "python -m engine.runs compare",
        "python -m engine.snapshot restore",
        "python scripts/plot_progress.py",
        "python scripts/report.py",
    ):
        assert any(c.text.startswith(needed) for c in ran), needed


def test_the_readme_queries_archives_with_engine_runs_sql():
    """No `duckdb` CLI comes with the quickstart: the README's way to query an archive is `python -m engine.runs
    sql` (in "The archive" and in "Seeing a run"), not `python -c "import duckdb ..."`."""
    text = README.read_text()
    sql = [c for c in COMMANDS if c.text.startswith("python -m engine.runs sql")]
    lines = {c.line for c in sql}
    archive_at = text[: text.index("## The archive")].count("\n")
    seeing_at = text[: text.index("## Seeing a run")].count("\n")
    assert any(archive_at < line < seeing_at for line in lines), "no `python -m engine.runs sql` in The archive"
    assert any(line > seeing_at for line in lines), "no `python -m engine.runs sql` in Seeing a run"
    assert 'python -c "import duckdb' not in text


# ----- the rules themselves, on made-up lines -----------------------------------------------------------


def test_the_cli_tables_name_every_flag_and_what_a_resume_may_change():
    """The README's Command line section names every flag of `python -m engine.search`, and its `--resume` row
    lists exactly the settings declared as changeable on a resume (engine/config)."""
    from engine.config import RunConfig
    from engine.front.cli import build_parser

    text = README.read_text()
    section = text[text.index("## Command line") : text.index("## The task: online bin packing")]
    named = set(re.findall(r"`(--[a-z][a-z-]*)", section))
    flags = {a.option_strings[-1] for a in build_parser()._actions if a.option_strings} - {"--help"}
    assert flags - named == set()
    resume_row = next(line for line in section.splitlines() if line.startswith("| `--resume RUN`"))
    may_change = set(re.findall(r"`(--[a-z][a-z-]*)`", resume_row.split("|")[2]))
    assert may_change == {item.flag for _, item in RunConfig.settings() if item.meta.on_resume == "change"}


def test_extraction_splits_drops_comments_and_skips_model_lines():
    text = (
        "```\npip install -e . && python -m engine.search --budget 200   # the default\n"
        "export OPENAI_API_KEY=...\npython -m engine.search --model openai/x --budget 5\n"
        "python -m engine.search --replay runs/<run-id>\nls runs\n```\n\n```python\npython -m engine.runs list\n```\n"
        "```bash\npython scripts/report.py runs/<run-id> --out 'a # b.html'  # note\n```\n"
        "```sql\nSELECT 1;\n```\n"
    )
    found = readme_commands(text)
    assert [(c.line, c.text, bool(c.skip)) for c in found] == [
        (2, "python -m engine.search --budget 200", False),
        (4, "python -m engine.search --model openai/x --budget 5", True),
        (5, "python -m engine.search --replay runs/<run-id>", True),
        (13, "python scripts/report.py runs/<run-id> --out 'a # b.html'", False),
    ]
    assert readme_sql(text) == [(15, "SELECT 1;\n")]


def test_rewrite_shrinks_budgets_adds_limits_and_fills_placeholders():
    runs = ["runs/r1", "runs/r2", "runs/r3"]
    assert rewrite("python -m engine.search --budget 200", runs) == (
        f"python -m engine.search --time-limit {TIME_LIMIT} --instances instances.json --budget {SMALL_BUDGET}"
    )
    assert rewrite("python -m engine.search --task circle_packing --budget 200", runs) == (
        f"python -m engine.search --time-limit {TIME_LIMIT} --task circle_packing --budget {SMALL_BUDGET}"
    )
    assert rewrite("python -m engine.search --resume-from snapshots/s1 --budget 400", runs) == (
        f"python -m engine.search --time-limit {TIME_LIMIT} --resume-from snapshots/s1 --budget {RESUME_BUDGET}"
    )
    assert rewrite("python -m engine.runs list [runs]", runs) == "python -m engine.runs list runs"
    assert rewrite("python -m engine.runs compare <a> <b> [<c>..]", runs) == (
        "python -m engine.runs compare runs/r1 runs/r2 runs/r3"
    )
    assert rewrite("python scripts/plot_progress.py runs/<a> runs/<b> --out plots/", runs) == (
        "python scripts/plot_progress.py runs/r2 runs/r3 --out plots/"
    )
    assert rewrite("python -m engine.runs best <run> --code-only > agent.py", runs) == (
        "python -m engine.runs best runs/r3 --code-only > agent.py"
    )
    assert rewrite("python -m engine.snapshot export runs/<run-id> snapshots/s1", runs) == (
        "python -m engine.snapshot export runs/r3 snapshots/s1"
    )
    with pytest.raises(ValueError):
        rewrite("python -m engine.runs compare <a> <b> <c> <d>", runs)
