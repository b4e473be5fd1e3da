"""Creating a new run: its task checked, its seed chosen, its folder and archive made with the seed as node 0."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.config import RunConfig
from engine.errors import UserError, no_space
from engine.front.opening import make_run_task, new_run_folder

if TYPE_CHECKING:
    from archive import Archive
    from tasks.base import Task


def create_run(config: RunConfig, llm_mock: Any = None, task: Task | None = None) -> tuple[Archive, Task, RunConfig]:
    """(archive, task, config) of a new run; every refusal is one line, before anything is made. `task`: one
    given in Python (engine.front.api), else the one the configuration names."""
    from archive import Archive, NodeRecord
    from archive.errors import is_disk_full
    from archive.store import files_hash
    from engine.front.agent_llm import check_agent_llm
    from engine.front.model_access import check_model_access
    from tasks.binpack.instances import InstanceFileError

    task = make_run_task(config) if task is None else task
    if config.benchmark.arena:
        from engine.front.arena_run import check_arena

        check_arena(config, task)
    check_agent_llm(config, task)  # before anything is made: these are one line each
    check_model_access(config, task, llm_mock)
    try:
        instances = task.instances()
    except InstanceFileError as exc:
        raise UserError(str(exc)) from None
    files, origin = _seed(config, task)
    config = _with_paths_resolved(config, task)
    run_id, folder = new_run_folder(config)
    archive = None
    try:
        archive = Archive.create(folder / "archive.duckdb", run_id, config.to_dict(), config.search.seed)
        archive.add_instances([(i.id, i.split, i.data) for i in instances])
        if files is None:
            files, origin = _bootstrap(config, task, archive, llm_mock, folder)
        root = NodeRecord.root(0, files_hash(files), f"from {origin}")
        archive.add_node(root, files, event=("start", 0, {"config": config.to_dict()}))
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        _discard(archive, folder)  # a run with no root node cannot be resumed: nothing of it is kept
        raise no_space(folder.parent, "creating the run; nothing of it was kept", then="start it again") from None
    return archive, task, config


def _discard(archive: Archive | None, folder: Path) -> None:
    import shutil

    if archive is not None:
        try:
            archive.close()
        except Exception:  # noqa: BLE001, S110 - the disk is full: closing may fail too; the folder goes anyway
            pass
    shutil.rmtree(folder, ignore_errors=True)


def _seed(config: RunConfig, task: Task) -> tuple[dict[str, str] | None, str]:
    """(the seed's files, where they come from): --agent's, the task's, or None when --bootstrap writes them."""
    from engine.front.agent_files import load_agent
    from engine.mutators import check_child

    files: dict[str, str] | None
    if config.benchmark.bootstrap:
        if task.has_seed:
            raise UserError(
                f"--bootstrap writes the seed of a public/private task folder that has none; "
                f"{config.search.task} has its own seed program"
            )
        return None, "the meta-agent"  # written once the run's archive can book the calls
    if config.search.agent:
        files, origin = load_agent(config.search.agent, task.entry_file), config.search.agent
    else:
        files, origin = task.seed_files(), f"the {task.name} seed"
    reason = check_child(files, task.entry_file, task.entry_function, task.entry_args)
    if reason:
        raise UserError(f"{origin} is not a usable agent: {reason}")
    return files, origin


def _with_paths_resolved(config: RunConfig, task: Task) -> RunConfig:
    """The paths a run stores made absolute (a resume may start elsewhere), and the task's interpreter resolved."""
    from tasks import TASKS

    search = config.search
    return config.with_overrides(
        task_python=task.python,  # the folder's entry, resolved
        agent=str(Path(search.agent).resolve()) if search.agent else None,
        task=str(Path(search.task).resolve()) if Path(search.task).is_dir() and search.task not in TASKS else None,
        instances=str(Path(search.instances).resolve())
        if search.instances and Path(search.instances).exists()
        else search.instances,  # a file, or Polyglot's list of languages and exercises
    )


def _bootstrap(
    config: RunConfig, task: Task, archive: Archive, llm_mock: Any, folder: Path
) -> tuple[dict[str, str], str]:
    """The seed the meta-agent writes from task.md (engine/front/bootstrap.py), its calls booked in the new
    run's archive; on failure the new run's folder goes (it holds no node) and the error is one line."""
    import shutil

    from engine.front.agent_llm import make_client
    from engine.front.bootstrap import write_seed
    from engine.mutators.model_choice import parse_models

    try:
        client = make_client(config, archive, task, llm_mock)
        source, tries = asyncio.run(write_seed(client, parse_models(config.llm.model or "")[0][0], task))
    except BaseException:
        archive.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    task.adopt_seed(source)
    return {task.entry_file: source}, f"the meta-agent, from data/public/task.md (--bootstrap, try {tries})"
