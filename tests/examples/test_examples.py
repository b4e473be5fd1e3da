"""The example task folders under examples/: each one is read in its format, documented, and improved on its seed
by a budget-40 search with the built-in offline mutator (no model), as its README says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.runinfo.info import run_info
from engine.runinfo.reading import open_read_only
from tasks.adapters import detect

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
FORMATS = {
    "openevolve_python": "openevolve",
    "shinka_cpp": "shinkaevolve",
    "metric_value": "metric_value",
    "public_private": "public_private",
}
COMMAND = re.compile(r"^clade search --task (examples/\S+) --budget 40$", re.MULTILINE)
BASH_BLOCK = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def example_folders() -> list[Path]:
    return sorted(p for p in EXAMPLES.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def test_the_four_formats_each_have_an_example():
    assert {p.name: detect(p) for p in example_folders() if p.name in FORMATS} == FORMATS


@pytest.mark.parametrize("folder", example_folders(), ids=lambda p: p.name)
def test_each_example_has_a_readme_naming_its_own_command(folder: Path):
    readme = folder / "README.md"
    assert readme.is_file(), f"{folder.name} has no README.md"
    commands = [m.group(1) for block in BASH_BLOCK.findall(readme.read_text()) for m in COMMAND.finditer(block)]
    assert commands, f"{readme}: no `clade search --task examples/... --budget 40` line in a bash block"
    for task in commands:
        assert (REPO / task).resolve() == folder.resolve(), f"{readme} runs {task}, not its own folder"
    detect(folder)  # a folder Clade reads (ValueError otherwise)


def search(folder: Path, run_dir: Path) -> Path:
    """A budget-40 offline search on the example, as its README runs it; the run's folder."""
    env = dict(os.environ, PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="200")
    command = [sys.executable, "-m", "clade", "search", "--task", str(folder), "--budget", "40", "--seed", "0"]
    done = subprocess.run(
        [*command, "--run-dir", str(run_dir)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (archive,) = run_dir.glob("*/archive.duckdb")
    return archive.parent


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_budget_40_offline_search_improves_on_the_seed(name: str, tmp_path: Path):
    run = search(EXAMPLES / name, tmp_path)
    info = run_info(run)
    with open_read_only(run) as archive:
        seed_dev = archive.dev_node_stats()[0].mean
        seed_holdout = archive.holdout_mean(0)[0]
    assert (info.config["mutator"], info.config["model"]) == ("offline", None)
    assert info.final_node not in (None, 0), "the search kept its seed"
    final_dev, final_holdout = info.final_dev[0], info.final_holdout[0]
    assert final_dev is not None and seed_dev is not None and final_dev > seed_dev
    assert final_holdout is not None and seed_holdout is not None and final_holdout > seed_holdout
