"""The sections of a run's configuration that concern models: the meta-agent, self-improvement, judged benchmarks.

Declared like those of engine/config/sections.py: each setting once, with its
help, its resume and replay rules; each section checks its own settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from engine.config.sections import Section
from engine.config.settings import one_model, setting
from engine.errors import UserError


@dataclass(frozen=True)
class LLMSection(Section):
    title: ClassVar[str] = "LLM meta-agent (without --model, the offline mutator is used)"

    model: str | None = setting(
        None,
        help="litellm model(s), e.g. openai/gpt-5-mini; several as a,b,c or a@2,b@1",
        shown="none: the offline mutator",
        metavar="M",
    )
    api_base: str | None = setting(
        None,
        help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 (llama.cpp, vLLM, Ollama)",
        shown="the provider's",
        metavar="URL",
    )
    embedding_model: str | None = setting(
        None,
        help="litellm embedding model (e.g. openai/text-embedding-3-small): with --model, a child whose code embeds "
        "within cosine 0.995 of a node's is sent back to the model as a near-duplicate",
        shown="the offline MinHash check",
        metavar="M",
    )
    max_cost: float | None = setting(
        None, help="stop new expansions once this many dollars are spent", on_resume="change", type=float, metavar="USD"
    )
    max_tokens: int | None = setting(
        None, help="stop new expansions once this many tokens are spent", on_resume="change", type=int, metavar="N"
    )
    llm_concurrency: int = setting(2, help="model calls in flight at once", on_resume="change", type=int, metavar="K")
    meta_steps: str = setting(
        "implement",
        help="implement, or diagnose,implement (a reviewer's diagnosis first, then the implementer)",
        choices=("implement", "diagnose,implement"),
    )
    meta_recommendations: int = setting(
        0,
        help="every N expansions a model call (purpose meta) reads the recent and best nodes and writes "
        "recommendations that every later mutation prompt carries (ShinkaEvolve's meta_rec_interval); 0: off",
        shown="0: off",
        type=int,
        metavar="N",
    )
    meta_recommendations_max: int = setting(
        5, help="recommendations kept from each such call (the first K of its numbered list)", type=int, metavar="K"
    )
    evolve_prompts: bool = setting(
        False,
        help="the mutation prompt's instruction is a population: one chosen per expansion by UCB over its "
        "children's improvement, a new one written from the best every --prompt-evolve-interval expansions",
        switch=True,
    )
    prompt_evolve_interval: int = setting(
        10, help="with --evolve-prompts: expansions between two new prompts (purpose prompt)", type=int, metavar="M"
    )
    answer_format: str = setting(
        "auto",
        help="auto: SEARCH/REPLACE blocks, switched to whole files for a model whose diff answers keep coming back "
        "malformed; diff; or rewrite (whole files)",
        choices=("auto", "diff", "rewrite"),
    )
    max_failed_expansions: int = setting(
        8,
        help="stop the run (resumable) after K expansions in a row with no usable child: failed, or with a model "
        "invalid too",
        type=int,
        metavar="K",
        on_resume="change",
        on_replay="original",
    )
    max_failing_time: float = setting(
        300.0,
        help="stop the run (resumable) when no model call has succeeded for SEC seconds while calls fail",
        type=float,
        metavar="SEC",
        on_resume="change",
        on_replay="original",
    )
    model_choice: str = setting(
        "fixed",
        help="fixed (the weights of --model) or bandit (ShinkaEvolve's asymmetric UCB)",
        choices=("fixed", "bandit"),
    )
    replay: str | None = setting(
        None,
        help="run the search of RUN again, every model call answered from RUN's archive at no cost",
        metavar="RUN",
        on_replay="change",
    )
    agent_model: str | None = setting(
        None,
        help="models the agents themselves may call through the run's LLM gateway (a,b), for tasks such as humaneval",
        shown="--model's",
        metavar="M",
    )
    agent_max_tokens: int | None = setting(
        None,
        help="tokens (in + out) one evaluation's agent may use; past it the evaluation ends as an error",
        shown="the task's cap",
        type=int,
        metavar="N",
    )

    def check(self) -> None:
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
        if self.max_failed_expansions < 1:
            raise UserError(f"--max-failed-expansions must be 1 or more, not {self.max_failed_expansions}")
        if not self.max_failing_time > 0:
            raise UserError(f"--max-failing-time must be a positive number of seconds, not {self.max_failing_time}")
        if self.meta_recommendations < 0:
            raise UserError(f"--meta-recommendations must be 0 (off) or more, not {self.meta_recommendations}")
        if not 1 <= self.meta_recommendations_max <= 50:
            raise UserError(f"--meta-recommendations-max must be from 1 to 50, not {self.meta_recommendations_max}")
        if self.prompt_evolve_interval < 1:
            raise UserError(f"--prompt-evolve-interval must be 1 or more, not {self.prompt_evolve_interval}")
        prompts = (("--meta-recommendations", self.meta_recommendations), ("--evolve-prompts", self.evolve_prompts))
        for flag, on in prompts:
            if on and not self.model:
                raise UserError(
                    f"{flag} needs --model: it changes the LLM mutator's prompts, and the offline mutator has none"
                )
        if self.agent_max_tokens is not None and self.agent_max_tokens <= 0:
            raise UserError(f"--agent-max-tokens must be a positive number of tokens, not {self.agent_max_tokens}")
        if self.model or self.agent_model:
            from engine.mutators.model_choice import parse_models

            for spec in (self.model, self.agent_model):
                if spec:
                    parse_models(spec)


@dataclass(frozen=True)
class ImprovementSection(Section):
    title: ClassVar[str] = "self-improving agents (HGM, DGM, SICA)"

    mutator: str = setting(
        "offline",
        help="offline, llm, self (the parent agent is run on a copy of its own code and its edits are the child; "
        "needs --model, which the agent calls through the gateway), or human (a person answers each mutation "
        "prompt, in the terminal or on the live page)",
        shown="offline without --model, llm with it",
        choices=("offline", "llm", "self", "human"),
        noun="mutator",
    )
    utility: str | None = setting(
        None,
        help="SICA's utility as the score policies see, e.g. score=0.5,cost=0.25,time=0.25 (weights summing to 1; a "
        "timeout halves it)",
        shown="none: the task's score",
        metavar="TERMS",
    )
    cost_cap: float | None = setting(
        None,
        help="dollars per instance at which the utility's cost term reaches 0",
        shown="SICA's 10",
        type=float,
        metavar="USD",
    )
    time_cap: float | None = setting(
        None,
        help="seconds per instance at which the utility's time term reaches 0",
        shown="SICA's 300",
        type=float,
        metavar="SEC",
    )
    overseer: str | None = setting(
        None,
        help="a model that reads running agents' recent calls every few calls and may stop one that loops, stalls or "
        "games its task (SICA's overseer)",
        metavar="MODEL",
    )

    def make_utility(self) -> Any:
        """SICA's utility when --utility is set (engine.loop.utility.Utility), else None."""
        if self.utility is None:
            return None
        from engine.loop.utility import Utility

        return Utility.parse(self.utility, self.cost_cap, self.time_cap)

    def check(self) -> None:
        if self.utility is not None or self.cost_cap is not None or self.time_cap is not None:
            if self.utility is None:
                raise UserError(
                    "--cost-cap and --time-cap set the caps of --utility: give --utility too, e.g. "
                    "--utility score=0.5,cost=0.25,time=0.25"
                )
            try:
                self.make_utility()
            except ValueError as exc:
                raise UserError(str(exc)) from None
        one_model("--overseer", self.overseer)


def _arena(default: int, help: str, metavar: str) -> Any:
    """A number of the arena's rounds: a run keeps its own; a replay follows the original's recorded events."""
    return setting(default, help=help, type=int, metavar=metavar, on_replay="original")


@dataclass(frozen=True)
class BenchmarkSection(Section):
    title: ClassVar[str] = "benchmarks that evolve or are judged (SIA, the four-level loops)"

    bootstrap: bool = setting(
        False,
        help="a public/private task folder without a seed program: the meta-agent (--model) writes the seed from "
        "data/public/task.md (up to 3 tries, each failure fed back)",
        switch=True,
    )
    arena: str | None = setting(
        None,
        help="single or tournament: test-writing agents co-evolve against the code agents; tests a trusted oracle "
        "confirms join the dev set (tasks with an oracle: email_validation)",
        shown="off",
        choices=("single", "tournament"),
        on_replay="original",
    )
    arena_round: int = _arena(
        2,
        "single: code children per round; tournament: rounds between replacing the worst of each population by a "
        "child of its best",
        "K",
    )
    arena_population: int = _arena(4, "tournament: code agents and testers, each", "P")
    arena_proposals: int = _arena(10, "tests a tester proposes per run", "N")
    agent_tests: str = setting(
        "on",
        help="polyglot: the agent may run the exercise's tests while it works and read their output (Aider's "
        "second try shows the model their output); off: it has only the instructions, as Aider's first try",
        choices=("on", "off"),
    )
    judge_model: str | None = setting(
        None,
        help="the model that grades a rubric task's answers against its boolean checks, outside the sandbox",
        shown="none; rubric tasks need one",
        metavar="MODEL",
    )

    def check(self) -> None:
        one_model("--judge-model", self.judge_model)
        if self.arena is None:
            return
        if self.arena_round < 1:
            raise UserError(f"--arena-round must be 1 or more, not {self.arena_round}")
        if self.arena_population < 2:
            raise UserError(f"--arena-population must be 2 or more, not {self.arena_population}")
        if not 1 <= self.arena_proposals <= 1000:
            raise UserError(f"--arena-proposals must be between 1 and 1000, not {self.arena_proposals}")
