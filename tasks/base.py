"""What the engine needs from a benchmark: `Task`, and the capabilities a task opts into.

A task owns its instances, what goes into the sandbox to run an agent on one
(`sandbox_files`, `command`), and the grading of the answer that comes back,
which happens outside the sandbox and trusts nothing the agent printed.

Write a task by subclassing `Task` and filling in its abstract parts; every
other part has a declared default, so the engine calls `task.hidden_paths()`
and gets `()` from a task that hides nothing. A task with one of these
capabilities subclasses its class too (the engine dispatches on the class,
never probes for attributes):
- `CheckedTask`: grading runs untrusted code (tests on the agent's function)
  in a sandbox job of its own (`check_job`);
- `JudgedTask`: a model grades the answers (`judge_grade`), given to the task
  with `attach_judge` before the search;
- `ArenaTask`: an oracle confirms tests that evolving testers propose (--arena).

`AgentJob` is the part `engine.loop.evaluation.run_agent` needs (files in,
command, answer out, verdict): a task is one, and so is anything else the
engine runs as an agent (a self-improvement run, a tester).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from engine.sandbox.base import SandboxJob, SandboxLimits, SandboxResult

if TYPE_CHECKING:
    from engine.lang.toolchain import Toolchain
    from engine.llm import LLMClient

SCORE_NOTE = "scores are measured against the seed on each instance"  # what a score means, unless a task says
DEFAULT_AGENT_MAX_TOKENS = 100_000  # tokens one evaluation's agent may use through the gateway, unless a task says

AgentLLM = Literal["required", "optional", "none"]


@dataclass(frozen=True)
class Instance:
    id: str
    split: str  # 'dev' | 'holdout'
    data: dict


@dataclass(frozen=True)
class Grade:
    """The evaluator's verdict on one answer: valid or not, raw figures, a line of feedback.

    `caught`: the evaluator ran and answered, but reports that the candidate failed (OpenEvolve's `error`
    entry, ShinkaEvolve's `correct: false` with a message, a traceback on the benchmark's stderr): the
    error, one line. The evaluation is then stored as `failed_in_evaluator`, scored 0 like every failure,
    with `metrics` (the evaluator's figures, kept for the user but never read as the task's raw figure)
    and the error in its feedback."""

    valid: bool
    metrics: dict = field(default_factory=dict)
    feedback: str = ""
    caught: str = ""


@dataclass(frozen=True)
class CheckRun:
    """A task's check step as it ran (see `CheckedTask.check_job`): the job the task asked for and how it ended."""

    job: SandboxJob
    result: SandboxResult


class AgentJob(ABC):
    """Something the engine runs as an agent: files into a sandbox, a command, an answer file graded outside."""

    name: str
    answer_file: str  # what the command writes; an agent's own file of that name never ships
    limits: SandboxLimits
    # The interpreter `command()` (and a check job) run, set by the engine from --task-python or a task folder's
    # `python` file; None: the engine's own `sys.executable`.
    python: str | None = None

    @abstractmethod
    def sandbox_files(self, instance: Instance) -> dict[str, bytes]:
        """The files the job needs besides the agent's (a runner, the instance's data); they win over the agent's."""

    @abstractmethod
    def command(self) -> Sequence[str]: ...

    @abstractmethod
    def grade(self, instance: Instance, answer: bytes) -> Grade:
        """The verdict on the answer file's bytes, outside the sandbox."""

    def hidden_paths(self) -> tuple[str, ...]:
        """Host paths no sandbox may see (an installed benchmark's data with its tests and solutions)."""
        return ()

    def toolchains(self) -> tuple[Toolchain, ...]:
        """The compilers and runtimes its jobs run besides the entry file's language (Polyglot's six), found at
        run start where users install them; a UserError (one line, naming the package) for a missing one.
        None of its own by default: the engine looks up the entry file's language."""
        return ()

    def docker_image(self) -> str | None:
        """The image its jobs need under docker when --image is not given (Polyglot's, built from Debian's
        packages); None: the engine's choice (the compilers' image for a compiled entry file)."""
        return None

    def setup_note(self) -> str:
        """One line for the run's header on what the jobs run on; '' says nothing."""
        return ""

    def caught_in_output(self, grade: Grade, result: SandboxResult) -> Grade:
        """The valid verdict once the job's own output is read too: a task whose program may catch its own
        failure and still answer marks it here (`Grade.caught`); unchanged by default."""
        return grade

    def trajectory(self, answer: bytes) -> list[dict]:
        """The agent's steps as it reported them in its answer (stored with the evaluation); none by default."""
        return []


class Task(AgentJob):
    """A benchmark: its instances, the agent's entry point and seed, and how an answer scores."""

    description: str  # what the agent must do, as the meta-agent's prompt tells it
    entry_file: str  # e.g. "agent.py"
    entry_function: str  # e.g. "priority"
    entry_args: tuple[str, ...]  # e.g. ("item", "bins")
    # Does the agent call a model (engine/gateway)? "required": the run needs --agent-model or --model.
    agent_llm: AgentLLM = "none"
    agent_max_tokens: int = DEFAULT_AGENT_MAX_TOKENS  # tokens one evaluation's agent may use through the gateway

    @property
    @abstractmethod
    def raw_metric(self) -> str:
        """Short name of the figure reports show beside scores, e.g. "excess %"."""

    @property
    def raw_metric_note(self) -> str:
        """One line saying what the raw figure is; '' says nothing."""
        return ""

    @property
    def score_note(self) -> str:
        """One line saying what a score is measured against."""
        return SCORE_NOTE

    @property
    def needs_judge(self) -> bool:
        """True for a `JudgedTask` (a model grades the answers): the run needs --judge-model."""
        return isinstance(self, JudgedTask)

    @abstractmethod
    def seed_files(self) -> dict[str, str]:
        """The root agent's files (path -> text)."""

    @abstractmethod
    def instances(self) -> list[Instance]:
        """Every instance, dev and holdout, in a fixed order."""

    @abstractmethod
    def score(self, instance: Instance, metrics: Mapping, reference: Mapping | None) -> float:
        """A graded answer's score in [0, 1]; `reference`: the seed's metrics on the same instance (None for the
        seed's own first run, or a smoke run)."""

    @abstractmethod
    def raw_value(self, metrics: Sequence[Mapping]) -> float | None:
        """The raw figure over several answers' metrics (e.g. mean excess %), None when there is none."""

    def reference_agents(self) -> dict[str, dict[str, str]]:
        """Hand-written agents (name -> files) measured once per run beside the search's; none by default."""
        return {}

    def smoke_instance(self) -> Instance | None:
        """The instance a self-edited child must solve before it is stored (--mutator self); None: the dev
        instance its parent did best on."""
        return None

    @property
    def has_seed(self) -> bool:
        """False for a folder that comes without its seed program (the meta-agent writes one: --bootstrap)."""
        return True

    def adopt_seed(self, source: str) -> None:
        """Take `source` as the seed's entry file (--bootstrap wrote it, or a resumed run's node 0 holds it).
        Only a task whose `has_seed` can be False has anything to do."""
        raise NotImplementedError(f"the {self.name} task has its own seed")


class CheckedTask(Task):
    """Grading runs untrusted code (tests on the agent's function): the engine runs `check_job`'s job in a fresh
    sandbox of the run's backend (without the agent's files or gateway), then calls `grade(instance, answer,
    CheckRun(job, result))`."""

    @abstractmethod
    def check_job(self, instance: Instance, answer: bytes) -> SandboxJob | Grade:
        """The job that checks the answer; a Grade instead when the answer cannot even be checked."""

    @abstractmethod
    def grade(self, instance: Instance, answer: bytes, check: CheckRun | None = None) -> Grade: ...


class JudgedTask(Task):
    """A model grades the answers (a rubric task): the run needs --judge-model, which the engine gives the task
    with the run's LLM client (`attach_judge`) before the search; `judge_grade` is awaited instead of `grade`."""

    @abstractmethod
    def attach_judge(self, client: LLMClient, model: str) -> None: ...

    @abstractmethod
    async def judge_grade(self, instance: Instance, answer: bytes) -> Grade:
        """The judge's verdict; the run's budget or a refused key raise the client's `StopRun`s."""


class ArenaTask(Task):
    """A task that can host an arena (--arena): testers propose tests, the task's trusted oracle confirms each
    outside any sandbox, and the confirmed ones join the dev set (engine/arena)."""

    tester_description: str  # what a tester must do, as the meta-agent's prompt tells it

    @abstractmethod
    def tester_files(self) -> dict[str, str]:
        """The seed tester's files (`tester.py` with `propose(n, seed)`)."""

    def oracle_missing(self) -> str | None:
        """Why the oracle cannot run here (a package not installed), else None."""
        return None

    @abstractmethod
    def proposal_key(self, proposal: object) -> str | None:
        """A proposal's identity, to refuse repeats; None when it has none (refused by `confirm`)."""

    @abstractmethod
    def instance_keys(self, instance: Instance) -> list[str]:
        """The keys of the tests an instance already holds."""

    @abstractmethod
    def confirm(self, proposal: object) -> str | None:
        """The oracle's word: None when confirmed, else why the proposal is refused (one line)."""

    @abstractmethod
    def arena_data(self, confirmed: Sequence[Any]) -> dict:
        """An instance's data made of confirmed proposals."""
