"""A run's configuration: what the user asked for, stored as JSON in `runs.config`."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from engine.errors import UserError


@dataclass(frozen=True)
class RunConfig:
    task: str = "binpack"
    policy: str = "hgm"
    stages: str = "default"  # staged evaluation, e.g. "4:0.5" or "none" (search.cascade); "default": the policy's
    final: str | None = None  # final rule (search.final.FINAL_RULES); None: the policy's own
    final_k: int | None = None  # k of the max_mean_k final rule (None: every dev instance)
    budget: int = 200  # dev evaluations (node x instance), HGM's convention
    workers: int = 0  # 0: one per core
    seed: int = 0
    run_dir: str = "runs"
    time_limit: float | None = None  # seconds of wall time for the search phase
    agent: str | None = None  # a file or folder to start from instead of the task's seed
    instances: str | None = None  # a JSON file of instances instead of generated ones
    sandbox: str = "auto"  # the strongest backend that works here
    image: str | None = None  # docker image (default: clade-sandbox, python + numpy)
    task_python: str | None = None  # the interpreter of the task's jobs (a venv's); None: the engine's
    executor: str = "local"  # or "ray": each evaluation a Ray task
    ray_address: str | None = None  # an existing Ray cluster; None starts a local Ray
    eval_timeout: float | None = None  # per-evaluation wall limit, overriding the task's
    memory_mb: int | None = None  # per-evaluation memory limit, overriding the task's
    cpu_time: int | None = None  # per-evaluation CPU seconds, overriding the task's
    max_procs: int | None = None  # processes alive at once in one evaluation, overriding the task's
    output_bytes: int | None = None  # stdout/stderr tail kept per evaluation, overriding the task's
    cpus: float | None = None  # CPU share of one evaluation (docker), overriding the task's
    mutator: str = "offline"  # "llm" when a model is given
    model: str | None = None  # litellm model name(s): "a,b,c" or "a@2,b@1" (weights)
    api_base: str | None = None  # a local OpenAI-compatible server
    embedding_model: str | None = None  # litellm embedding model: near-duplicate children by embeddings (--model runs)
    max_cost: float | None = None  # dollars
    max_tokens: int | None = None  # tokens in + out
    llm_concurrency: int = 2  # model calls in flight at once
    meta_steps: str = "implement"  # or "diagnose,implement"
    answer_format: str = "auto"  # SEARCH/REPLACE blocks ("diff"), whole files ("rewrite"), or diff until malformed
    live_interval: float = 2.0  # seconds between the live copies readers see while the search runs (0: none)
    compile_check: str = "auto"  # a compiled language's children through its compiler: auto (where installed), on, off
    max_failed_expansions: int = 8  # the circuit breaker: failed expansions in a row that stop the run
    max_failing_time: float = 300.0  # the circuit breaker: seconds without a successful model call while calls fail
    model_choice: str = "fixed"  # or "bandit" (ShinkaEvolve's asymmetric UCB)
    replay: str | None = None  # an archive whose recorded answers serve every model call
    agent_model: str | None = None  # models the agents may call through the LLM gateway ("a,b"); default --model
    agent_max_tokens: int | None = None  # tokens one evaluation's agent may use, overriding the task's cap
    target: float | None = None  # metric value that scores 1 for a task folder with an unbounded metric
    utility: str | None = None  # SICA's utility, e.g. "score=0.5,cost=0.25,time=0.25": the score policies see
    cost_cap: float | None = None  # dollars per instance at which the utility's cost term reaches 0 (SICA: $10)
    time_cap: float | None = None  # seconds per instance at which its time term reaches 0 (SICA: 300)
    overseer: str | None = None  # a model that watches running agents and may stop them (SICA's overseer)
    judge_model: str | None = None  # grades a rubric task's answers outside the sandbox (LLM judge)
    bootstrap: bool = False  # a public/private folder without a seed: the meta-agent writes it from task.md (SIA)
    gateway_listen: str | None = None  # HOST:PORT: the LLM gateway on TCP too, for Ray workers on other machines
    gateway_tls: list[str] | None = None  # [certificate file, key file]: that TCP endpoint over TLS
    arena: str | None = None  # 'single' or 'tournament': testers co-evolve and grow the dev set (engine/arena)
    arena_round: int = 2  # K: single, code children per round; tournament, rounds between replacements
    arena_population: int = 4  # tournament: code agents and testers, each
    arena_proposals: int = 10  # proposals asked of a tester per run

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

    def _validate_arena(self) -> None:
        if self.arena not in ("single", "tournament"):
            raise UserError(f"--arena must be 'single' or 'tournament', not {self.arena!r}")
        if self.mutator == "self":
            raise UserError("--arena evolves code agents and testers with the offline or llm mutator, not self")
        if self.arena_round < 1:
            raise UserError(f"--arena-round must be 1 or more, not {self.arena_round}")
        if self.arena_population < 2:
            raise UserError(f"--arena-population must be 2 or more, not {self.arena_population}")
        if not 1 <= self.arena_proposals <= 1000:
            raise UserError(f"--arena-proposals must be between 1 and 1000, not {self.arena_proposals}")

    def make_utility(self):
        """SICA's utility when --utility is set (engine.loop.utility.Utility), else None."""
        if self.utility is None:
            return None
        from engine.loop.utility import Utility

        return Utility.parse(self.utility, self.cost_cap, self.time_cap)

    def make_policy(self):
        """The search policy this configuration names, with its stages and final rule."""
        from search import make_policy

        return make_policy(
            self.policy,
            stages=None if self.stages == "default" else self.stages,
            final=self.final,
            final_k=self.final_k,
        )

    def resolved_workers(self) -> int:
        return self.workers or os.cpu_count() or 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        known = {f.name for f in fields(cls)}
        stored = {k: v for k, v in data.items() if k in known}
        stored.setdefault("stages", "none")  # archives from before staged defaults ran every policy unstaged
        stored.setdefault("answer_format", "diff")  # and before --answer-format auto, diff answers only
        return cls(**stored)

    def with_overrides(self, **changes: Any) -> RunConfig:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    def validate(self) -> RunConfig:
        from search import POLICIES
        from tasks import TASKS

        if self.task not in TASKS:
            if not os.path.isdir(self.task):
                raise UserError(
                    f"unknown task {self.task!r}; choose one of: {', '.join(TASKS)}, or give a task "
                    "folder (OpenEvolve, ShinkaEvolve, metric:value, public/private or rubric format)"
                )
            from tasks.adapters import detect

            try:
                detect(self.task)
            except ValueError as exc:
                raise UserError(str(exc)) from None
        if self.target is not None and not math.isfinite(self.target):
            raise UserError(f"--target must be a finite number, not {self.target}")
        if self.policy not in POLICIES:
            raise UserError(f"unknown policy {self.policy!r}; choose one of: {', '.join(sorted(POLICIES))}")
        if self.final_k is not None and self.final_k < 1:
            raise UserError(f"--final-k must be 1 or more evaluations, not {self.final_k}")
        if self.final_k is not None and self.final != "max_mean_k":
            raise UserError("--final-k needs --final max_mean_k")
        try:
            self.make_policy()
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if self.budget <= 0:
            raise UserError(f"--budget must be a positive number of evaluations, not {self.budget}")
        if self.workers < 0:
            raise UserError(f"--workers must be 1 or more (0 means one per core), not {self.workers}")
        if self.time_limit is not None and self.time_limit <= 0:
            raise UserError(f"--time-limit must be a positive number of seconds, not {self.time_limit}")
        if self.eval_timeout is not None and self.eval_timeout <= 0:
            raise UserError(f"--timeout must be a positive number of seconds, not {self.eval_timeout}")
        from engine.sandbox import SANDBOX_NAMES

        if self.sandbox not in SANDBOX_NAMES:
            raise UserError(f"unknown sandbox {self.sandbox!r}; choose one of: {', '.join(SANDBOX_NAMES)}")
        if self.image is not None and self.sandbox not in ("docker", "auto"):
            raise UserError(f"--image is for --sandbox docker, not {self.sandbox}")
        if self.task_python is not None and (self.sandbox == "docker" or self.image is not None):
            raise UserError(
                "--task-python is for --sandbox process or bwrap: under docker the image holds its own "
                "Python (give one that has what the task needs as --image)"
            )
        if self.executor not in ("local", "ray"):
            raise UserError(f"unknown executor {self.executor!r}; choose one of: local, ray")
        if self.ray_address is not None and self.executor != "ray":
            raise UserError("--ray-address needs --executor ray")
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
        if self.mutator not in ("offline", "llm", "self"):
            raise UserError(f"unknown mutator {self.mutator!r}; choose one of: offline, llm, self")
        if self.mutator in ("llm", "self") and not self.model:
            raise UserError(f"the {self.mutator} mutator needs --model (for example openai/gpt-5-mini)")
        if self.mutator == "self" and self.embedding_model:
            raise UserError(
                "--embedding-model checks the llm mutator's children; --mutator self uses the offline "
                "near-duplicate check"
            )
        if self.utility is not None or self.cost_cap is not None or self.time_cap is not None:
            from engine.loop.utility import Utility

            if self.utility is None:
                raise UserError(
                    "--cost-cap and --time-cap set the caps of --utility: give --utility too, e.g. "
                    "--utility score=0.5,cost=0.25,time=0.25"
                )
            try:
                Utility.parse(self.utility, self.cost_cap, self.time_cap)
            except ValueError as exc:
                raise UserError(str(exc)) from None
        if self.judge_model is not None:
            from engine.mutators.model_choice import parse_models

            if len(parse_models(self.judge_model)) != 1:
                raise UserError(f"--judge-model takes one model, not {self.judge_model!r}")
        if self.bootstrap and not self.model:
            raise UserError("--bootstrap has the meta-agent write the seed from the task's task.md: give --model")
        if self.arena is not None:
            self._validate_arena()
        if self.gateway_listen is not None or self.gateway_tls is not None:
            self.gateway_address()
        if self.overseer is not None:
            from engine.mutators.model_choice import parse_models

            if len(parse_models(self.overseer)) != 1:
                raise UserError(f"--overseer takes one model, not {self.overseer!r}")
        if self.embedding_model and not self.model:
            raise UserError(
                "--embedding-model needs --model: it checks the LLM mutator's children (the offline "
                "mutator's near-duplicate check needs no model)"
            )
        if self.max_cost is not None and self.max_cost <= 0:
            raise UserError(f"--max-cost must be a positive number of dollars, not {self.max_cost}")
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise UserError(f"--max-tokens must be a positive number of tokens, not {self.max_tokens}")
        if self.llm_concurrency < 1:
            raise UserError(f"--llm-concurrency must be 1 or more, not {self.llm_concurrency}")
        if self.meta_steps not in ("implement", "diagnose,implement"):
            raise UserError(f"--meta-steps must be 'implement' or 'diagnose,implement', not {self.meta_steps!r}")
        if not self.live_interval >= 0:
            raise UserError(f"--live-interval must be 0 (no live copy) or more seconds, not {self.live_interval:g}")
        if self.compile_check not in ("auto", "on", "off"):
            raise UserError(f"--compile-check must be 'auto', 'on' or 'off', not {self.compile_check!r}")
        if self.answer_format not in ("auto", "diff", "rewrite"):
            raise UserError(f"--answer-format must be 'auto', 'diff' or 'rewrite', not {self.answer_format!r}")
        if self.max_failed_expansions < 1:
            raise UserError(f"--max-failed-expansions must be 1 or more, not {self.max_failed_expansions}")
        if not self.max_failing_time > 0:
            raise UserError(f"--max-failing-time must be a positive number of seconds, not {self.max_failing_time}")
        if self.model_choice not in ("fixed", "bandit"):
            raise UserError(f"--model-choice must be 'fixed' or 'bandit', not {self.model_choice!r}")
        if self.agent_max_tokens is not None and self.agent_max_tokens <= 0:
            raise UserError(f"--agent-max-tokens must be a positive number of tokens, not {self.agent_max_tokens}")
        if self.model or self.agent_model:
            from engine.mutators.model_choice import parse_models

            for spec in (self.model, self.agent_model):
                if spec:
                    parse_models(spec)
        return self
