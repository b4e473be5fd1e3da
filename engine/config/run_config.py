"""RunConfig: a run's whole configuration, its sections joined, stored flat as JSON in `runs.config`.

The archive keeps one flat object (`config->>'budget'`), as it always has;
`to_dict` writes it and `from_dict` reads it back from any archive written
before, ignoring keys it does not know. Rules that join two sections are in
`validate`, after each section has checked its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from engine.config.model_sections import BenchmarkSection, ImprovementSection, LLMSection
from engine.config.sections import EvaluationSection, OutputSection, SearchSection, Section
from engine.config.settings import Declared, declared
from engine.errors import UserError

# Defaults for archives written before a setting existed: they go on as they ran.
_OLD_ARCHIVES = {
    "stages": "none",  # before staged defaults, every policy ran unstaged
    "answer_format": "diff",  # before --answer-format auto, diff answers only
}


@dataclass(frozen=True)
class RunConfig:
    search: SearchSection = field(default_factory=SearchSection)
    evaluation: EvaluationSection = field(default_factory=EvaluationSection)
    llm: LLMSection = field(default_factory=LLMSection)
    improvement: ImprovementSection = field(default_factory=ImprovementSection)
    benchmark: BenchmarkSection = field(default_factory=BenchmarkSection)
    output: OutputSection = field(default_factory=OutputSection)

    @staticmethod
    def sections() -> tuple[tuple[str, type[Section]], ...]:
        """(attribute, section class) of each section, in the order `--help` shows them."""
        return tuple((f.name, cast(type[Section], f.default_factory)) for f in dataclasses.fields(RunConfig))

    @classmethod
    def settings(cls) -> Iterator[tuple[str, Declared]]:
        """(section attribute, setting) of every declared setting."""
        for name, section in cls.sections():
            for item in declared(section):
                yield name, item

    @classmethod
    def of(cls, **flat: Any) -> RunConfig:
        """The defaults with these settings, named flat (`RunConfig.of(budget=24, sandbox="process")`)."""
        return cls()._changed(flat)

    def to_dict(self) -> dict[str, Any]:
        """The flat object stored in `runs.config`: every setting by its name."""
        return {item.name: getattr(getattr(self, home), item.name) for home, item in self.settings()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        known = {item.name for _, item in cls.settings()}
        stored = {**_OLD_ARCHIVES, **{k: v for k, v in data.items() if k in known}}
        return cls()._changed(stored)

    def with_overrides(self, **changes: Any) -> RunConfig:
        """This configuration with the settings given (None: not given, the value stays)."""
        return self._changed({k: v for k, v in changes.items() if v is not None})

    def _changed(self, flat: Mapping[str, Any]) -> RunConfig:
        home = {item.name: name for name, item in self.settings()}
        unknown = sorted(set(flat) - set(home))
        if unknown:
            raise TypeError(f"RunConfig has no setting {', '.join(unknown)}")
        changes: dict[str, dict[str, Any]] = {}
        for key, value in flat.items():
            changes.setdefault(home[key], {})[key] = value
        return dataclasses.replace(
            self, **{name: dataclasses.replace(getattr(self, name), **kw) for name, kw in changes.items()}
        )

    def validate(self) -> RunConfig:
        """Each section's own rules, then those across sections; a UserError (one line) for the first broken."""
        for name, _ in self.sections():
            getattr(self, name).validate()
        self._check_across()
        return self

    def _check_across(self) -> None:
        model, mutator = self.llm.model, self.improvement.mutator
        if mutator in ("llm", "self") and not model:
            raise UserError(f"the {mutator} mutator needs --model (for example openai/gpt-5-mini)")
        if mutator == "self" and self.llm.embedding_model:
            raise UserError(
                "--embedding-model checks the llm mutator's children; --mutator self uses the offline "
                "near-duplicate check"
            )
        if mutator == "self" and (self.llm.meta_recommendations or self.llm.evolve_prompts):
            raise UserError(
                "--meta-recommendations and --evolve-prompts change the llm mutator's prompts; --mutator self "
                "edits with the agent's own"
            )
        if self.benchmark.arena is not None and (self.llm.meta_recommendations or self.llm.evolve_prompts):
            raise UserError("--meta-recommendations and --evolve-prompts are for one population, not --arena's two")
        if self.benchmark.bootstrap and not model:
            raise UserError("--bootstrap has the meta-agent write the seed from the task's task.md: give --model")
        if mutator == "human" and model:
            raise UserError(
                "--mutator human answers in place of the meta-agent's model: leave out --model (--agent-model "
                "names the models the agents call)"
            )
        if self.benchmark.arena is not None and mutator == "human":
            raise UserError("--arena evolves code agents and testers with the offline or llm mutator, not human")
        if self.benchmark.arena is not None and mutator == "self":
            raise UserError("--arena evolves code agents and testers with the offline or llm mutator, not self")
        if self.benchmark.arena is not None and self.search.patience is not None:
            raise UserError("--patience stops the policy's search; the arena plays its rounds to the budget")
