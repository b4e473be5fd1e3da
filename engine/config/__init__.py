"""A run's configuration: what the user asked for, in sections, each setting declared once.

- settings.py: `setting(...)`, a field with what the command line and the resume rules need to know of it;
- sections.py, model_sections.py: the sections (search, evaluation, output; llm, improvement, benchmark),
  each a frozen dataclass that checks its own settings;
- run_config.py: RunConfig, the sections joined, the rules across them, the flat JSON of `runs.config`;
- arguments.py: the flags, the configuration a command line asks for, what a resume or a replay may change.
"""

from __future__ import annotations

from engine.config.model_sections import BenchmarkSection, ImprovementSection, LLMSection
from engine.config.run_config import RunConfig
from engine.config.sections import EvaluationSection, OutputSection, SearchSection

__all__ = [
    "BenchmarkSection",
    "EvaluationSection",
    "ImprovementSection",
    "LLMSection",
    "OutputSection",
    "RunConfig",
    "SearchSection",
]
