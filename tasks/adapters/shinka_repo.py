"""ShinkaEvolve's repo mode: the candidate is a small repository, not one file.

ShinkaEvolve's newer examples (e.g. `examples/inference_pipeline_repo`) hold
`evaluate.py` and a YAML config (`shinka.yaml`, passed to `shinka_run` as
`--config-fname`) whose `evo` section says:
- `seed_repo_path`: the seed repository, a folder of the task folder;
- `mutable_paths`: files or folders of it the search may change (none
  listed: all of it); `immutable_paths` and `agent_hidden_paths` stay as in
  the seed.
ShinkaEvolve runs `python evaluate.py --repo_path <worktree> --results_dir D`
and reads D/metrics.json and D/correct.json, as in its file mode
(tasks.adapters.openevolve.ShinkaEvolveTask, whose grading this reuses).

Here a node's files are the repository's mutable text files under `repo/`
(`repo/src/pipeline.py`): they land in the sandbox's `repo/` folder, where
the task ships every other file of the seed repository, and the runner
passes `--repo_path repo`. The entry file (what the offline mutator edits
and the entry-point check keeps) is the mutable Python file holding an
EVOLVE-BLOCK, else the first mutable Python file.
"""

from __future__ import annotations

from pathlib import Path

from tasks.adapters.folder import FolderTask, folder_files, read_text
from tasks.adapters.openevolve import SHINKA_CONFIGS, ShinkaEvolveTask, yaml_config

REPO_DIR = "repo"
CONFIG_NAMES = SHINKA_CONFIGS


def repo_config(root: Path) -> tuple[Path, dict] | None:
    """(config file, its `evo` section) when the folder is in repo mode: evaluate.py and a config naming an
    existing seed_repo_path; None otherwise. ValueError (one line) for a config that cannot be read."""
    if not (root / "evaluate.py").is_file():
        return None
    for name in CONFIG_NAMES:
        path = root / name
        evo = yaml_config(path).get("evo")  # one-line ValueError for YAML it cannot read
        if (
            isinstance(evo, dict)
            and isinstance(evo.get("seed_repo_path"), str)
            and (root / evo["seed_repo_path"]).is_dir()
        ):
            return path, evo
    return None


def _listed(evo: dict, key: str) -> list[str]:
    value = evo.get(key) or []
    return [str(v).strip("/") for v in value] if isinstance(value, list) else [str(value).strip("/")]


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


class ShinkaRepoTask(ShinkaEvolveTask):
    format = "shinkaevolve_repo"

    def __init__(self, root, instances_path=None, target=None) -> None:
        root = Path(root).resolve()
        found = repo_config(root)
        if found is None:
            raise ValueError(f"{root}: no shinka.yaml naming an existing evo.seed_repo_path beside evaluate.py")
        config, evo = found
        seed_dir = evo["seed_repo_path"].strip("/")
        repo = folder_files(root, under=seed_dir)
        mutable = _listed(evo, "mutable_paths")
        fixed = _listed(evo, "immutable_paths") + _listed(evo, "agent_hidden_paths")
        self._seed_files: dict[str, str] = {}
        shipped: dict[str, bytes] = {}
        for path, data in repo.items():
            inside = path[len(seed_dir) + 1 :]
            changeable = (_under(inside, mutable) if mutable else True) and not _under(inside, fixed)
            text = _text(data) if changeable else None
            if text is None:
                shipped[f"{REPO_DIR}/{inside}"] = data
            else:
                self._seed_files[f"{REPO_DIR}/{inside}"] = text
        entry = _entry_file(self._seed_files)
        if entry is None:
            raise ValueError(
                f"{root / seed_dir}: no Python file under evo.mutable_paths "
                f"({', '.join(mutable) or 'the whole repository'}) for the search to change"
            )
        FolderTask.__init__(self, root, entry, instances_path, target, source=self._seed_files[entry])
        readme = root / "README.md"
        self.description = (
            read_text(readme)
            if readme.is_file()
            else (
                f"Improve the repository under {REPO_DIR}/ (its files {', '.join(sorted(self._seed_files))}): the "
                "task's evaluate.py (ShinkaEvolve repo mode) runs it and reports metrics; a higher combined_score "
                "is better, and the repository must stay correct."
            )
        )
        self.config_file = config.name
        self.runner_settings = {"repo": REPO_DIR}
        own = folder_files(root)
        if any(p == REPO_DIR or p.startswith(REPO_DIR + "/") for p in own):
            raise ValueError(f"{root}: has its own {REPO_DIR}/ folder, where Clade assembles the candidate repository")
        self._files = {**{p: d for p, d in own.items() if not _under(p, [seed_dir])}, **shipped}

    def seed_files(self) -> dict[str, str]:
        return dict(self._seed_files)


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _entry_file(files: dict[str, str]) -> str | None:
    python = sorted(p for p in files if p.endswith(".py"))
    marked = [p for p in python if "EVOLVE-BLOCK-START" in files[p]]
    return marked[0] if marked else python[0] if python else None
