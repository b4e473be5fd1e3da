"""Clade as users install it: build the sdist and the wheel, look inside, install the wheel alone in a fresh venv
and run, from an empty folder, what a new user runs.

    python scripts/check_wheel.py                           # every step; its folders in a temporary one, removed
    python scripts/check_wheel.py --keep /tmp/wheel-check   # kept there: dist/, the venv, every run
    python scripts/check_wheel.py --api-base http://127.0.0.1:8080/v1   # the model-calling tasks on that server

Each step prints one line, `ok   STEP  what it saw (T s)` or `FAIL STEP  why`, indented details below it:
- build: the repository's files (no .git, caches, runs or earlier builds) copied to a new folder; there,
  `python -m build` (the sdist, then the wheel from the sdist) and `python -m build --wheel` (the wheel straight
  from the files): both wheels hold the same files, byte for byte.
- contents: the wheel's top-level names are exactly TOP_LEVEL; every file under those folders in the repository
  is in it (the seed agents, every task's data, the templates, the report's and live page's files); no bytecode.
- twine: `twine check --strict` on both artifacts (what PyPI renders and accepts).
- venv: a fresh venv, `pip install -c constraints.txt 'WHEEL[tasks,viz,pandas,llm,languages]'` (and pytest for
  Polyglot's Python exercises, ipykernel and nbclient for the notebook), `pip check` clean, every package
  imported from the venv and the source tree on no path.
- quickstart: `clade search --budget 200` exits 0 and its summary matches the clone's (the seed's and the
  reference's rows, the budget line, the rule that chose the final node; which node it is may differ between
  any two runs on two workers).
- tasks: every built-in task at budget 10. A task calling a model runs against `--api-base` (an
  OpenAI-compatible server, model `openai/stub`) when given; a task whose toolchain or data is missing may
  refuse, its last line `error: ...` and exit 2 (no traceback). Any other ending fails the step.
- new-task: `clade new-task` in every format, then a search on each folder at budget 10.
- runs: `clade runs list`, `clade runs show`, `clade plot lineage` and `clade report` on the Quickstart's run.
- sweep: `clade new-task` an OpenEvolve folder, `clade sweep --task it --grid policy=hgm,dgm --seeds 2 --budget 10`
  (four searches, two at a time), `clade sweep show` (the table and the sentence) and `clade report SWEEP`.
- module: `python -m engine.search --budget 20`.
- api: `import clade; clade.search(...)`, then the Run's tables and best node.
- extras: a missing extra is named as installed users install it (`pip install 'clade-search[ray]'`).
- notebook: examples/tutorial.ipynb top to bottom (nbclient, a kernel on the venv's Python).

Exit 0 when every step is ok, 1 otherwise (every step that can run is tried). Needs `build`, `twine` (the dev
extra) and PyPI (the venv's packages, the build's isolated setuptools; pip's cache makes a second run quick).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.install import DISTRIBUTION  # noqa: E402

TOP_LEVEL = ("agents_seed", "archive", "clade", "engine", "search", "tasks")
EXTRAS = "tasks,viz,pandas,llm,languages"  # every built-in task's packages, the plots, the tables as DataFrames
# beside the wheel: pytest (Polyglot's Python exercises run on it, as its error says), the notebook's kernel and runner
ALSO = ("pytest", "ipykernel", "nbclient", "nbformat")
MODEL_TASKS = ("humaneval", "repofix", "polyglot")  # their agents call a model
SKIP_ANYWHERE = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"}
SKIP_AT_TOP = {"build", "dist", "runs", "site", ".venv", "venv"}


class StepFailed(Exception):
    """A step's one line of why."""


def run(argv: Sequence[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def must(done: subprocess.CompletedProcess, what: str) -> str:
    """stdout of a command that must exit 0; StepFailed with its last lines otherwise."""
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-6:]
        raise StepFailed(f"{what} exited {done.returncode}: " + " | ".join(tail))
    return done.stdout


# ----- the artifacts -----------------------------------------------------------------------------------------
def copy_sources(dest: Path) -> Path:
    """The repository's files, without what git ignores here (caches, runs, earlier builds)."""

    def ignored(folder: str, names: list[str]) -> set[str]:
        top = Path(folder).resolve() == REPO
        return {
            n
            for n in names
            if n in SKIP_ANYWHERE or n.endswith(".pyc") or (top and (n in SKIP_AT_TOP or n.endswith(".egg-info")))
        }

    shutil.copytree(REPO, dest, ignore=ignored)
    return dest


def package_files(root: Path) -> set[str]:
    """Every file under the top-level folders the wheel installs, as paths relative to `root`."""
    found = set()
    for top in TOP_LEVEL:
        for path in (root / top).rglob("*"):
            if path.is_file():
                found.add(path.relative_to(root).as_posix())
    return found


def wheel_digests(wheel: Path) -> dict[str, str]:
    """{name: sha256} of a wheel's files, its RECORD aside (it lists the digests of the others)."""
    with zipfile.ZipFile(wheel) as archive:
        return {
            info.filename: hashlib.sha256(archive.read(info)).hexdigest()
            for info in archive.infolist()
            if not info.filename.endswith(".dist-info/RECORD")
        }


def only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        raise StepFailed(f"{folder} holds {len(found)} files matching {pattern}")
    return found[0]


class Check:
    """The steps, sharing the folders they make."""

    def __init__(self, work: Path, api_base: str | None, isolation: bool) -> None:
        self.work = work
        self.api_base = api_base
        self.isolation = isolation
        self.sources = work / "sources"
        self.dist = work / "dist"
        self.direct = work / "dist-direct"
        self.venv = work / "venv"
        self.home = work / "home"  # the empty folder a user works in
        self.quickstart_run: Path | None = None
        self.details: list[str] = []

    # the environment of a user of the venv: its bin first, no PYTHONPATH, nothing of the clone
    def user_env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.update(extra)
        return env

    def user_folder(self, name: str) -> Path:
        folder = self.home / name
        folder.mkdir(parents=True)
        return folder

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def build(self) -> str:
        copy_sources(self.sources)
        isolation = [] if self.isolation else ["--no-isolation"]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        must(run([sys.executable, "-m", "build", *isolation, "--outdir", str(self.dist), "."], self.sources, env),
             "python -m build")  # fmt: skip
        must(run([sys.executable, "-m", "build", *isolation, "--wheel", "--outdir", str(self.direct), "."],
                 self.sources, env), "python -m build --wheel")  # fmt: skip
        sdist, wheel = only(self.dist, "*.tar.gz"), only(self.dist, "*.whl")
        from_sdist, direct = wheel_digests(wheel), wheel_digests(only(self.direct, "*.whl"))
        if from_sdist != direct:
            differ = sorted(set(from_sdist) ^ set(direct)) or sorted(n for n in direct if from_sdist[n] != direct[n])
            raise StepFailed(f"the sdist builds another wheel than the sources do: {', '.join(differ[:8])}")
        return (
            f"{sdist.name} ({sdist.stat().st_size / 1024:.0f} KiB), {wheel.name} ({wheel.stat().st_size / 1024:.0f} "
            f"KiB); the sdist's wheel and the sources' are the same {len(direct)} files"
        )

    def contents(self) -> str:
        wheel = only(self.dist, "*.whl")
        with zipfile.ZipFile(wheel) as archive:
            infos = archive.infolist()
        names = {info.filename for info in infos}
        tops = {name.split("/")[0] for name in names if ".dist-info/" not in name}
        if tops != set(TOP_LEVEL):
            raise StepFailed(f"top-level names {sorted(tops)}, expected exactly {list(TOP_LEVEL)}")
        missing = sorted(package_files(self.sources) - names)
        if missing:
            raise StepFailed(f"{len(missing)} files of the packages are not in the wheel: {', '.join(missing[:8])}")
        bytecode = sorted(n for n in names if n.endswith(".pyc") or "/__pycache__/" in n)
        if bytecode:
            raise StepFailed(f"bytecode in the wheel: {', '.join(bytecode[:5])}")
        size = sum(info.file_size for info in infos)
        per_top = {top: sum(1 for n in names if n.startswith(top + "/")) for top in TOP_LEVEL}
        self.details.append("files per top-level name: " + ", ".join(f"{t} {n}" for t, n in per_top.items()))
        return f"top-level names {', '.join(TOP_LEVEL)}; {len(names)} files, {size / 2**20:.1f} MiB unpacked"

    def twine(self) -> str:
        artifacts = [str(p) for p in sorted(self.dist.iterdir())]
        must(run([sys.executable, "-m", "twine", "check", "--strict", *artifacts], self.work, dict(os.environ)),
             "twine check")  # fmt: skip
        return f"twine check --strict passed on {len(artifacts)} artifacts"

    def install(self) -> str:
        wheel = only(self.dist, "*.whl")
        env = self.user_env()
        must(run([sys.executable, "-m", "venv", str(self.venv)], self.work, env), "python -m venv")
        pip = [self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        must(run([*pip, "-c", str(REPO / "constraints.txt"), f"{wheel}[{EXTRAS}]", *ALSO],
                 self.work, env), "pip install")  # fmt: skip
        must(run([self.python, "-m", "pip", "check"], self.work, env), "pip check")
        probe = (
            "import importlib, json, sys\n"
            f"mods = {{n: importlib.import_module(n) for n in {list(TOP_LEVEL)}}}\n"
            "print(json.dumps({'files': {n: list(m.__path__)[0] for n, m in mods.items()}, 'path': sys.path}))"
        )
        seen = json.loads(must(run([self.python, "-c", probe], self.user_folder("probe"), env), "import"))
        outside = {n: f for n, f in seen["files"].items() if not f.startswith(str(self.venv))}
        if outside:
            raise StepFailed(f"imported from outside the venv: {outside}")
        on_path = [p for p in seen["path"] if p and Path(p).resolve().is_relative_to(REPO)]
        if on_path:
            raise StepFailed(f"the source tree is on the venv's sys.path: {on_path}")
        return f"{DISTRIBUTION}[{EXTRAS}] installed; pip check clean; every package imported from the venv"

    def quickstart(self) -> str:
        mine = must(run(["clade", "search", "--budget", "200"], self.user_folder("quickstart"), self.user_env()),
                    "clade search --budget 200")  # fmt: skip
        clone_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        clones = must(run([sys.executable, "-m", "clade", "search", "--budget", "200"], self.user_folder("clone"),
                          clone_env), "the clone's clade search --budget 200")  # fmt: skip
        a, b = summary_of(mine), summary_of(clones)
        if a != b:
            raise StepFailed(f"the summary differs from the clone's: {a} against {b}")
        found = re.search(r"^Archive: (\S+)/archive\.duckdb$", mine, re.MULTILINE)
        if not found:
            raise StepFailed("the summary names no archive")
        self.quickstart_run = self.home / "quickstart" / found[1]
        self.details += [line for line in mine.splitlines() if line.strip()][-12:]
        return "exit 0; the seed's and reference's rows, the budget line and the final rule as from the clone"

    def tasks(self) -> str:
        from tasks import TASKS

        folder = self.user_folder("tasks")
        outcomes = []
        for task in TASKS:
            argv = ["clade", "search", "--task", task, "--budget", "10", "--quiet"]
            env = self.user_env()
            if task in MODEL_TASKS and self.api_base:
                argv += ["--agent-model", "openai/stub", "--api-base", self.api_base]
                env["OPENAI_API_KEY"] = "sk-stub"
            started = time.perf_counter()
            done = run(argv, folder, env)
            seconds = time.perf_counter() - started
            errors = done.stderr.strip().splitlines()
            if done.returncode == 0:
                outcomes.append(f"task {task}: ran in {seconds:.1f} s")
            elif (
                done.returncode == 2 and errors and errors[-1].startswith("error: ") and "Traceback" not in done.stderr
            ):
                outcomes.append(f"task {task}: refused: {errors[-1]}")  # after what it was doing (a fetch)
            else:
                raise StepFailed(f"--task {task} exited {done.returncode}: " + " | ".join(errors[-6:]))
        self.details += outcomes
        ran = sum(": ran in " in line for line in outcomes)
        return f"{ran} of {len(TASKS)} tasks ran at budget 10, the others refused in one line"

    def new_task(self) -> str:
        from clade.new_task import FORMATS

        folder = self.user_folder("new-task")
        for fmt in FORMATS:
            must(run(["clade", "new-task", "--format", fmt, fmt], folder, self.user_env()), f"clade new-task {fmt}")
            must(run(["clade", "search", "--task", fmt, "--budget", "10", "--quiet"], folder, self.user_env()),
                 f"clade search --task {fmt}")  # fmt: skip
        return f"{len(FORMATS)} formats written and searched: {', '.join(FORMATS)}"

    def runs(self) -> str:
        if self.quickstart_run is None:
            raise StepFailed("no Quickstart run to look at")
        folder, env, run_dir = self.home / "quickstart", self.user_env(), str(self.quickstart_run)
        listed = must(run(["clade", "runs", "list"], folder, env), "clade runs list")
        if self.quickstart_run.name not in listed:
            raise StepFailed("clade runs list does not list the Quickstart's run")
        must(run(["clade", "runs", "show", run_dir], folder, env), "clade runs show")
        must(run(["clade", "plot", "lineage", run_dir], folder, env), "clade plot lineage")
        must(run(["clade", "report", run_dir], folder, env), "clade report")
        made = [self.quickstart_run / name for name in ("lineage.png", "lineage.svg", "report.html")]
        absent = [p.name for p in made if not p.is_file() or p.stat().st_size == 0]
        if absent:
            raise StepFailed(f"not written: {', '.join(absent)}")
        return "runs list, runs show, plot lineage (png, svg), report (report.html)"

    def sweep(self) -> str:
        folder, env = self.user_folder("sweep"), self.user_env()
        must(run(["clade", "new-task", "--format", "openevolve", "my_task"], folder, env), "clade new-task")
        argv = ["clade", "sweep", "--task", "my_task", "--grid", "policy=hgm,dgm", "--seeds", "2", "--budget", "10"]
        ran = must(run([*argv, "--parallel", "2"], folder, env), "clade sweep")
        sweep = only(folder / "sweeps", "my_task-policy-*")
        shown = must(run(["clade", "sweep", "show", str(sweep)], folder, env), "clade sweep show")
        sentence = re.search(r"^dgm (above|below|and) hgm\b.*$", shown, re.MULTILINE)
        if sentence is None:
            raise StepFailed(f"clade sweep show printed no sentence comparing dgm with hgm: {shown[-500:]}")
        must(run(["clade", "report", str(sweep)], folder, env), "clade report SWEEP")
        if not (sweep / "report.html").is_file():
            raise StepFailed("clade report SWEEP wrote no report.html")
        self.details.append(sentence.group(0))
        done = sum("finished" in line for line in ran.splitlines())
        return f"4 searches ({done} finished lines), sweep show's table and sentence, report.html"

    def module(self) -> str:
        must(run([self.python, "-m", "engine.search", "--budget", "20", "--quiet"], self.user_folder("module"),
                 self.user_env()), "python -m engine.search --budget 20")  # fmt: skip
        return "python -m engine.search --budget 20: exit 0"

    def api(self) -> str:
        script = (
            "import clade\n"
            "run = clade.search(budget=10, quiet=True)\n"
            "nodes = run.nodes()\n"
            "assert type(nodes).__name__ == 'DataFrame' and len(nodes) >= 1, nodes\n"
            "print(run.best().id, len(nodes), len(run.evaluations()), run.status)\n"
        )
        said = must(run([self.python, "-c", script], self.user_folder("api"), self.user_env()), "clade.search")
        return f"clade.search(budget=10): best node, nodes, evaluations, status = {said.strip()}"

    def extras(self) -> str:
        folder, env = self.user_folder("extras"), self.user_env()
        wanted = f"pip install '{DISTRIBUTION}[ray]'"
        done = run(["clade", "search", "--executor", "ray", "--budget", "10"], folder, env)
        if done.returncode != 2 or wanted not in done.stderr:
            raise StepFailed(f"--executor ray without the extra: exit {done.returncode}, {done.stderr.strip()!r}")
        return f"--executor ray without ray: {done.stderr.strip()}"

    def notebook(self) -> str:
        folder = self.user_folder("notebook")
        shutil.copy(REPO / "examples" / "tutorial.ipynb", folder)
        env, kernel = self.user_env(), "clade-wheel-check"
        must(run([self.python, "-m", "ipykernel", "install", "--prefix", str(self.venv), "--name", kernel], folder,
                 env), "ipykernel install")  # fmt: skip
        script = (
            "import nbclient, nbformat\n"
            "nb = nbformat.read('tutorial.ipynb', as_version=4)\n"
            f"nbclient.NotebookClient(nb, timeout=900, kernel_name={kernel!r}, "
            "resources={'metadata': {'path': '.'}}).execute()\n"
            "nbformat.write(nb, 'executed.ipynb')\n"
        )
        started = time.perf_counter()
        must(run([self.python, "-c", script], folder, env, timeout=1800), "the notebook")
        seconds = time.perf_counter() - started
        executed = json.loads((folder / "executed.ipynb").read_text())
        cells = [c for c in executed["cells"] if c["cell_type"] == "code"]
        first = "".join(text_of(o.get("text", "")) for o in cells[0]["outputs"])
        if str(self.venv) not in first:
            raise StepFailed(f"the notebook's kernel did not import the venv's clade: {first.strip()!r}")
        images = sum("image/png" in o.get("data", {}) for c in cells for o in c["outputs"])
        return f"{len(cells)} code cells ran in {seconds:.0f} s; {images} images shown"


def text_of(value: str | list[str]) -> str:
    """A notebook's text field: one string, or (as nbformat writes a multi-line one) a list of lines."""
    return value if isinstance(value, str) else "".join(value)


def summary_of(text: str) -> list[str]:
    """What two Quickstart runs share: the seed's and reference's rows, the budget line, the final rule."""
    shared = []
    for line in text.splitlines():
        if re.match(r"^ (seed #0|best_fit \(reference\)) ", line):
            shared.append(" ".join(line.split()))
        elif ": budget spent;" in line:
            shared.append(line.split(": ", 1)[1])
        elif line.startswith("Final node "):
            shared.append(line.split(", ", 1)[-1])
    return shared


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="a new folder to work in and keep (default: a temporary one)")
    parser.add_argument("--api-base", help="an OpenAI-compatible server for the tasks whose agents call a model")
    parser.add_argument("--no-isolation", action="store_true", help="build with this Python's setuptools")
    parser.add_argument("--skip", default="", help="steps to leave out, comma-separated (e.g. notebook)")
    args = parser.parse_args(argv)
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        print(f"error: --keep {args.keep} is not empty; give a new folder", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="clade-wheel-check-"))
    work.mkdir(parents=True, exist_ok=True)
    check = Check(work.resolve(), args.api_base, isolation=not args.no_isolation)
    steps: list[tuple[str, Callable[[], str]]] = [
        ("build", check.build),
        ("contents", check.contents),
        ("twine", check.twine),
        ("venv", check.install),
        ("quickstart", check.quickstart),
        ("tasks", check.tasks),
        ("new-task", check.new_task),
        ("runs", check.runs),
        ("sweep", check.sweep),
        ("module", check.module),
        ("api", check.api),
        ("extras", check.extras),
        ("notebook", check.notebook),
    ]
    skipped = {s.strip() for s in args.skip.split(",") if s.strip()}
    needs_artifacts = {"contents", "twine", "venv"}
    failed: list[str] = []
    try:
        for name, step in steps:
            if name in skipped:
                print(f"skip {name}", flush=True)
                continue
            if failed and ("build" in failed or ("venv" in failed and name not in needs_artifacts)):
                print(f"skip {name}  (after {', '.join(failed)} failed)", flush=True)
                continue
            started = time.perf_counter()
            check.details.clear()
            try:
                said = step()
            except Exception as exc:  # noqa: BLE001 - a step's failure, or this script's own mistake: the rest still run
                failed.append(name)
                expected = isinstance(exc, StepFailed | subprocess.TimeoutExpired | OSError)
                print(f"FAIL {name}  {exc if expected else f'{type(exc).__name__}: {exc}'}", flush=True)
                continue
            print(f"ok   {name}  {said} ({time.perf_counter() - started:.1f} s)", flush=True)
            for line in check.details:
                print(f"     {line}", flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wheel check: {len(steps) - len(failed) - len(skipped)} of {len(steps)} steps ok" + (
        f"; failed: {', '.join(failed)}" if failed else ""))  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
