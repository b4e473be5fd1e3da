"""The sections of a run's configuration, each setting declared once (engine/config/settings.py).

Each section is a frozen dataclass that checks its own settings (`validate`,
one-line UserErrors); rules that join two sections live in RunConfig.validate
(engine/config/run_config.py). A section's `title` heads its group of flags in
`--help`. Help texts say what a setting does; the generator adds its default.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from engine.config.settings import check_choices, positive_int, setting
from engine.errors import UserError
from engine.words import did_you_mean


class Section:
    """What every section does: check its choices, then its own rules."""

    title: ClassVar[str]

    def validate(self) -> None:
        check_choices(self)
        self.check()

    def check(self) -> None:
        """The section's rules beyond its choices; a UserError (one line) for the first one broken."""


def _sandbox_names() -> Sequence[str]:
    from engine.sandbox import SANDBOX_NAMES  # light: backends are imported when one is made

    return SANDBOX_NAMES


def _task_names() -> Sequence[str]:
    from tasks import TASKS  # light: a task's module is imported when it is made

    return TASKS


def _policy_names() -> Sequence[str]:
    from search.names import POLICY_NAMES  # light: strings only, no policy (and no numpy) imported

    return POLICY_NAMES


def _final_rules() -> Sequence[str]:
    from search.names import FINAL_RULES

    return tuple(FINAL_RULES)


def _looks_like_a_path(text: str) -> bool:
    """A value meant as a folder, not a name: it has a slash, or starts with . or ~."""
    return "/" in text or os.sep in text or text.startswith((".", "~"))


@dataclass(frozen=True)
class SearchSection(Section):
    title: ClassVar[str] = "search"

    task: str = setting(
        "binpack",
        help="benchmark to run: a built-in task ({known}), or a task folder in OpenEvolve, ShinkaEvolve, "
        "metric:value, public/private or rubric format (binpack_cpp's agent is C++ and needs g++)",
        metavar="TASK",
        known=_task_names,
    )
    target: float | None = setting(
        None,
        help="stop when the best full-dev mean reaches the target's score: for a task folder, X is the metric value "
        "that scores 1 (the run stops once a node scores 1 on every dev instance); for a built-in task, X is that "
        "score itself, from 0 to 1",
        shown="none; a task folder is scored against its PERFECT_SCORE if it states one, but not stopped by it",
        type=float,
        metavar="X",
    )
    patience: int | None = setting(
        None,
        help="stop when the best full-dev mean has not improved for N dev evaluations (the final node is still "
        "chosen and measured on holdout); a resumed run counts from its archive, so give a larger N to go on",
        shown="none: the budget decides",
        type=positive_int,
        metavar="N",
        on_resume="change",
        on_replay="original",
    )
    policy: str = setting(
        "hgm",
        help="search policy (docs/guide/policies.md)",
        choices=_policy_names,
        noun="policy",
    )
    stages: str = setting(
        "default",
        help="staged evaluation for any policy: N:T or P%:T[,...] (a node gets N instances, or P% of them, and "
        "more only if its mean is at least T); none turns off the default of dgm and hgm",
        shown="DGM's for dgm and hgm, 1/6 of dev at 0.4; none for the others",
        metavar="SPEC",
    )
    final: str | None = setting(
        None,
        help="final rule: epsilon_quantile (HGM's), max_mean, or max_mean_k",
        shown="the policy's own",
        choices=_final_rules,
        noun="final rule",
    )
    island_stagnation: int | None = setting(
        None,
        help="openevolve, shinka, shinka_power_law: when an island's last S expansions did not raise its best, a "
        "new island is seeded from the best node of the other islands (the root for shinka's first); openevolve's "
        "takes the stagnated island's turn, shinka's joins the turns (ShinkaEvolve's islands on stagnation)",
        shown="off, as in OpenEvolve and Clade's one-island shinka",
        type=int,
        metavar="S",
    )
    final_k: int | None = setting(
        None,
        help="k of --final max_mean_k: the evaluations a final node needs",
        shown="every dev instance",
        type=int,
        metavar="K",
    )
    budget: int = setting(
        200,
        help="dev evaluations (node x instance) to spend; with --resume, the new total",
        type=int,
        metavar="N",
        on_resume="change",
        on_replay="original",
    )
    workers: int = setting(
        0,
        help="evaluations in flight at once, 1 or more",
        shown="one per core",
        type=positive_int,
        metavar="W",
        on_resume="change",
        on_replay="change",
    )
    seed: int = setting(0, help="random seed of the search", type=int, metavar="S")
    time_limit: float | None = setting(
        None,
        help="stop starting new work after this many seconds",
        type=float,
        metavar="SEC",
        on_resume="change",
        on_replay="original",
    )
    agent: str | None = setting(
        None,
        help="start from this agent (a file, or a folder with the task's entry file)",
        shown="the task's seed",
        metavar="PATH",
    )
    instances: str | None = setting(
        None,
        help="JSON file of instances (name -> {capacity, items[, split]}), a subset file of a built-in task, or "
        "for polyglot a list of languages and exercises (python,go or python/affine-cipher)",
        shown="the task's own, generated for binpack",
        metavar="FILE|LIST",
    )

    def make_policy(self) -> Any:
        """The search policy this section names, with its stages and final rule."""
        from search import make_policy

        return make_policy(
            self.policy,
            stages=None if self.stages == "default" else self.stages,
            final=self.final,
            final_k=self.final_k,
            **({} if self.island_stagnation is None else {"island_stagnation": self.island_stagnation}),
        )

    def stop_score(self) -> float | None:
        """The best full-dev mean at which --target ends the run: 1 for a task folder (its target is the metric
        value that scores 1), the target itself for a built-in task (a score); None without --target."""
        if self.target is None:
            return None
        return self.target if self.task in _task_names() else 1.0

    def resolved_workers(self) -> int:
        return self.workers or os.cpu_count() or 1

    def check(self) -> None:
        self._check_task()
        if self.target is not None and not math.isfinite(self.target):
            raise UserError(f"--target must be a finite number, not {self.target}")
        if self.target is not None and self.task in _task_names() and not 0.0 < self.target <= 1.0:
            raise UserError(
                f"--target for the built-in task {self.task} is a score from 0 to 1 (the seed scores 0.5), "
                f"not {self.target:g}; a task folder's --target is a metric value"
            )
        self._check_policy()
        if self.budget <= 0:
            raise UserError(f"--budget must be a positive number of evaluations, not {self.budget}")
        if self.workers < 0:
            raise UserError(f"--workers must be 1 or more (0 means one per core), not {self.workers}")
        if self.patience is not None and self.patience < 1:
            raise UserError(f"--patience must be 1 or more dev evaluations, not {self.patience}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise UserError(f"--time-limit must be a positive number of seconds, not {self.time_limit}")

    def _check_task(self) -> None:
        from tasks import TASKS

        if self.task in TASKS:
            return
        if not _looks_like_a_path(self.task) and not os.path.exists(self.task):
            raise UserError(
                f"unknown task {self.task!r}{did_you_mean(self.task, TASKS)}; choose one of: {', '.join(TASKS)}, "
                "or give a task folder (OpenEvolve, ShinkaEvolve, metric:value, public/private or rubric format)"
            )
        if not os.path.exists(self.task):
            raise UserError(f"no such folder: {self.task}")
        if not os.path.isdir(self.task):
            raise UserError(
                f"--task {self.task}: a file, not a folder (a task folder holds the program and its grader)"
            )
        from tasks.adapters import detect

        try:
            detect(self.task)
        except ValueError as exc:
            raise UserError(str(exc)) from None

    def _check_policy(self) -> None:
        if self.final_k is not None and self.final_k < 1:
            raise UserError(f"--final-k must be 1 or more evaluations, not {self.final_k}")
        if self.final_k is not None and self.final != "max_mean_k":
            raise UserError("--final-k needs --final max_mean_k")
        if self.island_stagnation is not None and self.policy not in ISLAND_POLICIES:
            raise UserError(
                f"--island-stagnation spawns islands of the {', '.join(ISLAND_POLICIES)} policies; {self.policy} "
                "has none"
            )
        if self.island_stagnation is not None and self.island_stagnation < 1:
            raise UserError(f"--island-stagnation must be 1 or more expansions, not {self.island_stagnation}")
        try:
            self.make_policy()
        except ValueError as exc:
            raise UserError(str(exc)) from None


ISLAND_POLICIES = ("openevolve", "shinka", "shinka_power_law")  # --island-stagnation applies to these


def _limit(default_help: str, kind: type, metavar: str, **more: Any) -> Any:
    """A per-evaluation limit: it overrides the task's, and a run (and its replay) keeps its own."""
    return setting(
        None, help=default_help, shown="the task's", type=kind, metavar=metavar, on_replay="original", **more
    )


@dataclass(frozen=True)
class EvaluationSection(Section):
    title: ClassVar[str] = (
        "sandboxes and executors (limits default to the task's; binpack: 20 s, 20 CPU s, 1024 MB, 64 processes, "
        "8192 output bytes, 1 CPU)"
    )

    sandbox: str = setting(
        "auto",
        help="auto: the strongest that works here (docker, bwrap, process); process; bwrap (namespaces: no "
        "network, read-only root); docker (containers)",
        choices=_sandbox_names,
        noun="sandbox",
        on_replay="original",
    )
    compile_check: str = setting(
        "auto",
        help="a task in a compiled language (C, C++, Rust, Go, Fortran): auto: each child that parses also goes "
        "through its compiler (g++ -fsyntax-only, rustc --emit=metadata, go vet or gfortran -fsyntax-only), "
        "inside the sandbox, where installed; on: the compiler must be there; off: the tree-sitter syntax check "
        "alone",
        choices=("auto", "on", "off"),
        on_replay="original",
    )
    image: str | None = setting(
        None,
        help="docker image for --sandbox docker; it needs only python3 (and what the task imports)",
        shown="clade-sandbox:py3.11 (clade-sandbox-compilers:py3.11 for a compiled language), built from Debian's "
        "packages with no registry when missing",
        metavar="IMAGE",
        on_replay="original",
    )
    task_python: str | None = setting(
        None,
        help="the Python that runs the candidate and the task folder's evaluator in the sandbox: an executable or "
        "a venv folder; not with docker",
        shown="the task folder's 'python' file if it has one, else the engine's own",
        metavar="PATH",
        on_replay="change",
    )
    executor: str = setting(
        "local",
        help="local; ray: each evaluation a Ray task; slurm: each evaluation a Slurm job",
        choices=("local", "ray", "slurm"),
        noun="executor",
        on_resume="change",
        on_replay="change",
    )
    ray_address: str | None = setting(
        None,
        help="an existing Ray cluster (e.g. auto, or ray://host:10001)",
        shown="--executor ray starts a local Ray",
        metavar="ADDR",
        on_resume="change",
        on_replay="change",
    )
    slurm_partition: str | None = setting(
        None,
        help="the Slurm partition the evaluations' jobs go to",
        shown="the cluster's default partition",
        metavar="NAME",
        on_resume="change",
        on_replay="change",
    )
    slurm_time: str | None = setting(
        None,
        help="time limit of each evaluation's Slurm job, as sbatch --time takes it (minutes, or HH:MM:SS)",
        shown="the partition's default",
        metavar="TIME",
        on_resume="change",
        on_replay="change",
    )
    slurm_option: list[str] | None = setting(
        None,
        help="another sbatch option for each evaluation's job, e.g. mem=4G, qos=low, account=lab (repeat it)",
        shown="one task, one CPU",
        metavar="KEY=VALUE",
        repeat=True,
        on_resume="change",
        on_replay="change",
    )
    gateway_listen: str | None = setting(
        None,
        help="serve the agents' LLM gateway on TCP too, for Ray workers or Slurm nodes on other machines (a bearer "
        "token per evaluation; 127.0.0.1:0 = any free port)",
        shown="its Unix socket only",
        metavar="HOST:PORT",
        on_resume="change",
        on_replay="change",
    )
    gateway_tls: list[str] | None = setting(
        None,
        help="serve that TCP endpoint over TLS with this certificate and key (PEM); workers pin the certificate",
        shown="plain TCP",
        nargs=2,
        metavar=("CERT", "KEY"),
        on_resume="change",
        on_replay="change",
    )
    eval_timeout: float | None = _limit("wall-clock seconds of one evaluation", float, "SEC", flag="--timeout")
    memory_mb: int | None = _limit("memory of one evaluation in MB", int, "MB")
    cpu_time: int | None = _limit("CPU seconds of one evaluation's processes", int, "SEC")
    max_procs: int | None = _limit("processes alive at once in one evaluation", int, "N")
    output_bytes: int | None = _limit("bytes of stdout and of stderr kept per evaluation", int, "N")
    cpus: float | None = _limit("CPUs one evaluation may use (docker)", float, "N")

    def gateway_address(self) -> tuple[str, int] | None:
        """(host, port) of --gateway-listen (checked: UserError in one line), or None."""
        if self.gateway_tls is not None:
            if self.gateway_listen is None:
                raise UserError("--gateway-tls secures the gateway's TCP endpoint: give --gateway-listen HOST:PORT too")
            if len(self.gateway_tls) != 2:
                raise UserError("--gateway-tls takes two files: the certificate and its key (PEM)")
            for path in self.gateway_tls:
                if not os.path.isfile(path):
                    raise UserError(f"--gateway-tls: {path} is not a file")
        if self.gateway_listen is None:
            return None
        host, colon, port = self.gateway_listen.rpartition(":")
        if not colon or not port.isdigit() or int(port) > 65535:
            raise UserError(
                f"--gateway-listen takes HOST:PORT (e.g. 0.0.0.0:8765, or 127.0.0.1:0 for any free "
                f"port), not {self.gateway_listen!r}"
            )
        return host.strip("[]"), int(port)

    def check(self) -> None:
        if self.eval_timeout is not None and self.eval_timeout <= 0:
            raise UserError(f"--timeout must be a positive number of seconds, not {self.eval_timeout}")
        if self.image is not None and self.sandbox not in ("docker", "auto"):
            raise UserError(f"--image is for --sandbox docker, not {self.sandbox}")
        if self.task_python is not None and (self.sandbox == "docker" or self.image is not None):
            raise UserError(
                "--task-python is for --sandbox process or bwrap: under docker the image holds its own "
                "Python (give one that has what the task needs as --image)"
            )
        if self.ray_address is not None and self.executor != "ray":
            raise UserError("--ray-address needs --executor ray")
        slurm_given = {
            "--slurm-partition": self.slurm_partition is not None,
            "--slurm-time": self.slurm_time is not None,
            "--slurm-option": self.slurm_option is not None,
        }
        for flag, is_given in slurm_given.items():
            if is_given and self.executor != "slurm":
                raise UserError(f"{flag} needs --executor slurm")
        from engine.sandbox.slurm_options import check_slurm_time, parse_slurm_options

        try:
            if self.slurm_option is not None:
                parse_slurm_options(self.slurm_option)
            if self.slurm_time is not None:
                check_slurm_time(self.slurm_time)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        for flag, value in (
            ("--memory-mb", self.memory_mb),
            ("--cpu-time", self.cpu_time),
            ("--max-procs", self.max_procs),
            ("--cpus", self.cpus),
        ):
            if value is not None and not value > 0:
                raise UserError(f"{flag} must be a positive number, not {value}")
        if self.output_bytes is not None and self.output_bytes < 0:
            raise UserError(f"--output-bytes must be 0 or more, not {self.output_bytes}")
        if self.gateway_listen is not None or self.gateway_tls is not None:
            self.gateway_address()


@dataclass(frozen=True)
class OutputSection(Section):
    title: ClassVar[str] = "output"

    run_dir: str = setting("runs", help="folder that holds run folders", metavar="DIR", on_replay="change")
    live_interval: float = setting(
        2.0,
        help="while the search runs, refresh every SEC seconds a read-only copy of its archive "
        "(archive.live.duckdb) that `clade runs`, the plots, the report and the live page read "
        "(0: no copy, readers wait for the end)",
        type=float,
        metavar="SEC",
        on_resume="change",
        on_replay="change",
    )

    def check(self) -> None:
        if not self.live_interval >= 0:
            raise UserError(f"--live-interval must be 0 (no live copy) or more seconds, not {self.live_interval:g}")
