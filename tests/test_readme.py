"""The documentation's commands run as a user types them, and exit 0: README.md's and every page's under docs/.

What runs. Every line of a ``` block with no language (or bash, sh, shell) that runs `clade` (`clade search`,
`clade runs`, `clade snapshot`, `clade plot`, `clade report`, any other subcommand), `python -m engine.search`,
`python -m engine.runs`, `python -m engine.snapshot`, `python -m engine.report` or `python scripts/...`; a
line `a && b` is split and only its parts that run one of these are kept (`pip install`, `pytest` and `mkdocs`
are not run). Then every
```sql block, through `clade runs sql RUN "<the block>"` on the most recent run of its page. Inline commands
(in tables and prose) are not run. Each page is its own ordered sequence: README.md first, then the pages of
docs/ in path order; its commands run in page order, each with `page:line` in its test id, in a temporary
folder of the page's own (the workspace, the cwd of every command; it holds copies of scripts/ and
tests/fixtures/ and examples/, the checkout is on PYTHONPATH, and `python` and `clade` are this interpreter and this
checkout's `clade`): runs/, snapshots/, plots/ and the files the commands write go there, never into the
checkout, and a later command of the page (of the same block or a later one) uses the runs an earlier one
made.

Skipped (the reason is in the test id and in the skip message):
- a line with `--model`, `--agent-model` or `OPENAI_API_KEY`: it needs a model and its key;
- a line with `--replay`: the pages' replays replay a model run (made by the `--model` lines above them);
  tests/engine/loop/test_replay.py runs replays against a stub server.
- a line that runs a benchmark (`scripts/bench_*.py`, as docs/bench_*.md show them): minutes to hours each;
  tests/scripts/ runs the benchmarks on a small scale;
- a line that starts the live page (`runs serve`): it serves until Ctrl-C; tests/engine/live/ runs it;
- a line that runs scripts/check_wheel.py: it builds the package and installs it in a new venv (minutes);
  tests/scripts/test_check_wheel.py runs it.

Rewrites, made by `rewrite()` and shown in the failure message of each command:
1. Budgets: `--budget N` becomes `--budget 8` (SMALL_BUDGET); in a command that continues a run
   (`--resume`, `--resume-from`) `--budget 16` (RESUME_BUDGET), so that work is left after the 8 spent.
2. A new binpack search (`clade search` or `python -m engine.search` with no `--task` or `--task binpack`, and
   no `--resume`, `--resume-from` or `--replay`) gets `--instances instances.json`: 4 dev and 2 holdout
   instances of 120 items (tests/conftest.py's small_instances) instead of 16 + 16 of 500 to 1,000 items.
3. Time: every search (`clade search`, `python -m engine.search`) gets `--time-limit 60` (TIME_LIMIT: the
   engine stops new work then and still ends cleanly), and every command is killed after 120 s (WALL_LIMIT),
   which fails it.
4. Placeholders: an optional argument `[x]` becomes `x`, with `..` dropped (`[runs]` -> `runs`, `[<c>..]`
   -> `<c>`); `runs/<name>` and a bare `<name>` (`<run-id>`, `<run>`, `<a>`, ...) become `runs/<id>`, the
   folder of a run made earlier on this page. A command's distinct placeholders take distinct runs, the
   last one named the most recent: `compare <a> <b> <c>` gets the three most recent runs, oldest first.
   When fewer runs exist than a command names (a page's first commands), or none when a command that is no
   search names none (`clade runs list`), the missing ones are copied into the page's workspace from a stock
   of runs made once for the whole module, side by side: `clade search --budget 8 --seed K --instances
   instances.json` (K = 1, 2, ...).
5. A comment (`#` after a space, outside quotes) is dropped.

Time. The same new search on two pages (the Quickstart's `clade search --budget 200` is on README.md and
on getting-started.md) runs once: the second page gets copies of the run folders the first one made, and
the first one's output (the test id says `same as PAGE:LINE`). Runs a page only reads come from the stock.

The CLI flag tables are no longer in README.md: docs/reference/cli.md is generated from the argparse parsers,
and the site's own test checks that it names every flag and what a resume may change.
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
RUNS = re.compile(r"clade(?=\s|$)|python3? -m engine\.(search|runs|snapshot|report)\b|python3? scripts/")
SEARCH = re.compile(r"^(clade search|python3? -m engine\.search)\b")
SKIPS = (
    (re.compile(r"--model\b|--agent-model\b|OPENAI_API_KEY"), "needs a model and its API key"),
    (
        re.compile(r"--replay\b"),
        ("replays a model run (the --model runs above it need a key); tests/engine/loop/test_replay.py covers replay"),
    ),
    (re.compile(r"scripts/bench_"), "a benchmark (minutes to hours); tests/scripts/ runs the benchmarks small"),
    (re.compile(r"\bruns serve\b"), "a server runs until Ctrl-C; tests/engine/live/ runs the live page"),
    (
        re.compile(r"scripts/check_wheel\.py"),
        "builds and installs the package in a new venv (minutes); tests/scripts/test_check_wheel.py runs it",
    ),
)


def pages() -> list[Path]:
    """README.md, then every Markdown page under docs/, in path order."""
    return [README, *sorted((REPO / "docs").rglob("*.md"))]


def page_name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@dataclass(frozen=True)
class Command:
    page: str  # README.md, docs/guide/watching.md, ...
    line: int  # in that page
    block: int  # the ``` block's first line
    text: str  # as the page writes it, comment dropped
    skip: str | None  # why it is not run

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def id(self) -> str:
        shown = self.text if len(self.text) <= 90 else self.text[:87] + "..."
        return f"{self.where} {shown}" + (f" [SKIPPED: {self.skip}]" if self.skip else "")


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


def page_commands(text: str, page: str = "README.md") -> list[Command]:
    commands = []
    for start, body in blocks(text, ("", "bash", "sh", "shell")):
        for offset, raw in enumerate(body.splitlines(), 1):
            line = drop_comment(raw)
            for part in (p.strip() for p in line.split("&&")):
                if RUNS.match(part):
                    skip = next((why for pattern, why in SKIPS if pattern.search(part)), None)
                    commands.append(Command(page, start + offset, start, part, skip))
    return commands


def page_sql(text: str) -> list[tuple[int, str]]:
    return blocks(text, ("sql",))


def all_commands() -> list[Command]:
    return [c for path in pages() for c in page_commands(path.read_text(), page_name(path))]


def all_sql() -> list[tuple[str, int, str]]:
    return [(page_name(path), line, body) for path in pages() for line, body in page_sql(path.read_text())]


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


def continues(command: str) -> bool:
    return bool(re.search(r"--resume(-from)?\b", command))


def rewrite(command: str, runs: list[str]) -> str:
    """The page's command as the test runs it (rules 1 to 4 of the module docstring); `runs`: the run
    folders made so far (`runs/<id>`), oldest first."""
    out = re.sub(r"--budget\s+\d+", f"--budget {RESUME_BUDGET if continues(command) else SMALL_BUDGET}", command)
    if SEARCH.match(command):
        added = [f"--time-limit {TIME_LIMIT}"]
        task = re.search(r"--task\s+(\S+)", command)
        if not continues(command) and "--replay" not in command and (task is None or task.group(1) == "binpack"):
            added.append("--instances instances.json")
        out = SEARCH.sub(lambda m: m.group(1) + " " + " ".join(added), out, count=1)
    out = open_brackets(out)
    names = placeholders(command)
    if len(runs) < len(names):
        raise ValueError(f"{command!r} names {len(names)} runs; {len(runs)} made")
    chosen = dict(zip(names, runs[len(runs) - len(names) :]))
    return PLACEHOLDER.sub(lambda m: chosen[m.group(1)], out)


# ----- the workspaces ---------------------------------------------------------------------------------


class Workspace:
    """The temporary folder a page's commands run in, and the runs made there so far (oldest first)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(REPO / "scripts", root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(REPO / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(
            REPO / "tests" / "fixtures", root / "tests" / "fixtures", ignore=shutil.ignore_patterns("__pycache__")
        )
        small_instances(root / "instances.json")
        bin_dir = root / ".bin"  # `python` is this interpreter and `clade` this checkout's, whatever PATH says
        bin_dir.mkdir()
        (bin_dir / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        (bin_dir / "clade").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m clade "$@"\n')
        for shim in ("python", "clade"):
            (bin_dir / shim).chmod(0o755)
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
        self.from_stock = 0  # runs copied in from the stock so far

    def run_folders(self) -> set[str]:
        folder = self.root / "runs"
        return {p.name for p in folder.iterdir() if (p / "archive.duckdb").exists()} if folder.is_dir() else set()

    def shell(self, command: str) -> tuple[subprocess.CompletedProcess, list[str]]:
        """Run `command` here; the output and the run folders it made (`runs/<id>`)."""
        before = self.run_folders()
        out = subprocess.run(
            ["bash", "-c", command],
            check=False,
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=WALL_LIMIT,
        )
        made = sorted(f"runs/{name}" for name in self.run_folders() - before)
        self.runs += made
        return out, made

    def adopt(self, folders: list[Path]) -> None:
        """Copies of run folders made elsewhere, added as the most recent runs here (oldest first)."""
        for folder in folders:
            shutil.copytree(folder, self.root / "runs" / folder.name, ignore=shutil.ignore_patterns("*.live.*"))
            self.runs.append(f"runs/{folder.name}")

    def can_adopt(self, folders: list[Path]) -> bool:
        return not any((self.root / "runs" / f.name).exists() for f in folders)


class Stock(Workspace):
    """Runs made once for the whole module, for the pages that read runs their own commands do not make."""

    def ensure(self, n: int) -> None:
        """At least n runs: the missing ones are made by small searches side by side (distinct seeds, so
        distinct run ids), added oldest first."""
        missing = n - len(self.runs)
        if missing <= 0:
            return
        before = self.run_folders()
        procs = []
        for seed in range(len(self.runs) + 1, n + 1):
            command = (
                f"clade search --budget {SMALL_BUDGET} --seed {seed} --quiet "
                f"--instances instances.json --time-limit {TIME_LIMIT}"
            )
            proc = subprocess.Popen(
                ["bash", "-c", command],
                cwd=self.root,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            procs.append((command, proc))
        for command, proc in procs:
            out, err = proc.communicate(timeout=WALL_LIMIT)
            assert proc.returncode == 0, f"ran: {command}\n{out[-2000:]}{err[-2000:]}"
        made = self.run_folders() - before
        assert len(made) == missing, made
        self.runs += sorted(f"runs/{name}" for name in made)


class Session:
    """The module's workspaces (one per page), the stock, and the searches already run (to run each once)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stock = Stock(root / "stock")
        self.pages: dict[str, Workspace] = {}
        self.searches: dict[str, tuple[str, subprocess.CompletedProcess, list[Path]]] = {}

    def workspace(self, page: str) -> Workspace:
        if page not in self.pages:
            self.pages[page] = Workspace(self.root / re.sub(r"\W", "_", page))
        return self.pages[page]

    def ensure_runs(self, space: Workspace, n: int) -> None:
        missing = n - len(space.runs)
        if missing > 0:
            self.stock.ensure(space.from_stock + missing)
            taken = self.stock.runs[space.from_stock : space.from_stock + missing]
            space.adopt([self.stock.root / r for r in taken])
            space.from_stock += missing

    def run(self, command: Command) -> tuple[str, subprocess.CompletedProcess]:
        space = self.workspace(command.page)
        dedupe = bool(SEARCH.match(command.text)) and not continues(command.text)
        reads = not SEARCH.match(command.text)  # a command that reads runs finds one, named or not
        self.ensure_runs(space, max(len(placeholders(command.text)), int(reads)))
        ran = rewrite(command.text, space.runs)
        if dedupe and ran in self.searches:
            where, out, folders = self.searches[ran]
            if space.can_adopt(folders):
                space.adopt(folders)
                return f"{ran}  (same as {where}: its runs copied)", out
        out, made = space.shell(ran)
        if dedupe and out.returncode == 0 and made:
            self.searches[ran] = (command.where, out, [space.root / r for r in made])
        return ran, out


@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Session:
    return Session(tmp_path_factory.mktemp("docs"))


def _report(command: str, out: subprocess.CompletedProcess) -> str:
    return f"ran: {command}\nexit {out.returncode}\nstdout: {out.stdout[-3000:]}\nstderr: {out.stderr[-3000:]}"


COMMANDS = all_commands()
SQL = all_sql()


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", [pytest.param(c, id=c.id, marks=[pytest.mark.skip(reason=c.skip)] if c.skip else []) for c in COMMANDS]
)
def test_documented_command_exits_0(session, command):
    ran, out = session.run(command)
    assert out.returncode == 0, _report(ran, out)
    assert "Traceback" not in out.stderr, _report(ran, out)


@pytest.mark.slow
@pytest.mark.parametrize(
    "page, sql", [pytest.param(page, body, id=f"{page}:{line} sql block") for page, line, body in SQL]
)
def test_documented_sql_block_runs_through_clade_runs_sql(session, page, sql):
    space = session.workspace(page)
    session.ensure_runs(space, 1)
    command = ["clade", "runs", "sql", space.runs[-1], sql]
    out = subprocess.run(
        command, check=False, cwd=space.root, env=space.env, capture_output=True, text=True, timeout=WALL_LIMIT
    )
    assert out.returncode == 0, _report(shlex.join(command), out)
    assert re.search(r"^\d+ rows?$", out.stdout, re.MULTILINE), _report(shlex.join(command), out)  # a table was printed


# ----- what the pages promise about them ------------------------------------------------------------


def test_the_pages_have_the_commands_this_test_runs():
    ran = [c for c in COMMANDS if not c.skip]
    assert len(ran) >= 20 and len(SQL) >= 6
    for needed in (
        "clade search",
        "clade search --resume",
        "clade runs list",
        "clade runs show",
        "clade runs compare",
        "clade snapshot export",
        "clade snapshot restore",
        "clade plot lineage",
        "clade plot progress",
        "clade report",
    ):
        assert any(c.text.startswith(needed) for c in ran), needed
    readme = [c.text for c in ran if c.page == "README.md"]
    for needed in ("clade search", "clade runs show", "clade plot lineage", "clade report"):
        assert any(text.startswith(needed) for text in readme), f"README.md's example lacks {needed}"


def test_the_readme_is_short_and_points_into_the_site():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "shared/" not in text and "DESIGN.md" not in text
    for page in ("docs/getting-started.md", "docs/guide/tasks.md", "docs/guide/archive.md", "docs/design.md"):
        assert f"]({page})" in text, page
    assert "mkdocs serve" in text


def test_the_pages_query_archives_with_clade_runs_sql():
    """No `duckdb` CLI comes with the quickstart: the pages' way to query an archive is `clade runs sql` (in
    the archive's page and in the watching page), not `python -c "import duckdb ..."`."""
    sql = {c.page for c in COMMANDS if c.text.startswith("clade runs sql")}
    assert {"docs/guide/archive.md", "docs/guide/watching.md"} <= sql
    for path in pages():
        assert 'python -c "import duckdb' not in path.read_text(), page_name(path)


def test_getting_started_lists_what_a_resume_may_change():
    """Its `--resume` item names exactly the settings declared as changeable on a resume (engine/config), as the
    README's `--resume` row did."""
    from engine.config import RunConfig

    text = (REPO / "docs" / "getting-started.md").read_text()
    item = text[text.index("- `--resume RUN`") :]
    item = item[: item.index("\n- ")]
    named = set(re.findall(r"`(--[a-z][a-z-]*)`", item)) - {"--resume", "--resume-from"}
    assert named == {item.flag for _, item in RunConfig.settings() if item.meta.on_resume == "change"}


# ----- the rules themselves, on made-up lines -----------------------------------------------------------


def test_extraction_splits_drops_comments_and_skips_model_lines():
    text = (
        "```\npip install -e . && clade search --budget 200   # the default\n"
        "export OPENAI_API_KEY=...\npython -m engine.search --model openai/x --budget 5\n"
        "clade search --replay runs/<run-id>\nls runs\n```\n\n```python\nclade runs list\n```\n"
        "```bash\npython scripts/report.py runs/<run-id> --out 'a # b.html'  # note\nclade plot lineage <run>\n"
        "mkdocs serve\nclade runs serve\nclade-sandbox\n```\n"
        "```sql\nSELECT 1;\n```\n"
    )
    found = page_commands(text, "docs/x.md")
    assert [(c.line, c.text, bool(c.skip)) for c in found] == [
        (2, "clade search --budget 200", False),
        (4, "python -m engine.search --model openai/x --budget 5", True),
        (5, "clade search --replay runs/<run-id>", True),
        (13, "python scripts/report.py runs/<run-id> --out 'a # b.html'", False),
        (14, "clade plot lineage <run>", False),
        (16, "clade runs serve", True),
    ]
    assert found[0].id == "docs/x.md:2 clade search --budget 200"
    assert page_sql(text) == [(19, "SELECT 1;\n")]


def test_every_page_is_read_in_order_readme_first():
    found = pages()
    assert found[0] == README and REPO / "docs" / "getting-started.md" in found
    assert found[1:] == sorted(found[1:])


def test_rewrite_shrinks_budgets_adds_limits_and_fills_placeholders():
    runs = ["runs/r1", "runs/r2", "runs/r3"]
    for search in ("clade search", "python -m engine.search"):
        assert rewrite(f"{search} --budget 200", runs) == (
            f"{search} --time-limit {TIME_LIMIT} --instances instances.json --budget {SMALL_BUDGET}"
        )
        assert rewrite(f"{search} --task circle_packing --budget 200", runs) == (
            f"{search} --time-limit {TIME_LIMIT} --task circle_packing --budget {SMALL_BUDGET}"
        )
        assert rewrite(f"{search} --resume-from snapshots/s1 --budget 400", runs) == (
            f"{search} --time-limit {TIME_LIMIT} --resume-from snapshots/s1 --budget {RESUME_BUDGET}"
        )
    assert rewrite("clade search --resume runs/<run-id> --budget 400", runs) == (
        f"clade search --time-limit {TIME_LIMIT} --resume runs/r3 --budget {RESUME_BUDGET}"
    )
    assert rewrite("clade runs list [runs]", runs) == "clade runs list runs"
    assert rewrite("clade runs compare <a> <b> [<c>..]", runs) == "clade runs compare runs/r1 runs/r2 runs/r3"
    assert rewrite("clade plot progress runs/<a> runs/<b> --out plots/", runs) == (
        "clade plot progress runs/r2 runs/r3 --out plots/"
    )
    assert rewrite("python -m engine.runs best <run> --code-only > agent.py", runs) == (
        "python -m engine.runs best runs/r3 --code-only > agent.py"
    )
    assert rewrite("clade snapshot export runs/<run-id> snapshots/s1", runs) == (
        "clade snapshot export runs/r3 snapshots/s1"
    )
    assert rewrite("clade report runs/<run-id> --out r.html", runs) == "clade report runs/r3 --out r.html"
    with pytest.raises(ValueError):
        rewrite("clade runs compare <a> <b> <c> <d>", runs)
