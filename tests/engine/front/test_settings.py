"""Each setting is declared once (engine/config): the flags, the resume and replay rules and the mapping from
the command line to the configuration are derived from the declarations, so every field appears in each."""

from __future__ import annotations

import argparse

import pytest

from engine.config import RunConfig
from engine.config.arguments import (
    config_from_args,
    given,
    refuse_given,
    refuse_replayed,
    replayed_config,
    resumed_config,
    settings_kept,
)
from engine.errors import UserError
from engine.front.cli import build_parser

SETTINGS = list(RunConfig.settings())
NAMES = [item.name for _, item in SETTINGS]


def sample(item) -> list[str]:
    """A value for the setting's flag, as a user would type it, not its default."""
    if item.meta.switch:
        return []
    if item.meta.nargs == 2:
        return ["cert.pem", "key.pem"]
    choices = item.choices()
    if choices:
        return [next(c for c in reversed(choices) if c != item.default)]
    if item.meta.type is not None:
        return ["7"]
    return ["something"]


def parsed(item) -> argparse.Namespace:
    return build_parser().parse_args([item.flag, *sample(item)])


def test_every_setting_is_a_flag_in_the_group_of_its_section_with_its_default_said():
    parser = build_parser()
    groups = {g.title: {a.dest: a for a in g._group_actions} for g in parser._action_groups}
    for home, item in SETTINGS:
        title = dict(RunConfig.sections())[home].title
        action = groups[title][item.name]
        assert action.option_strings == [item.flag]
        assert action.default is None  # None: not given, so a resume and a replay can tell
        said = f"(default: {item.default_said()})"
        assert action.help.replace("%%", "%").endswith(said), item.name
        assert action.help.count("(default") == 1, f"{item.flag}: the generator writes the default, not the help"
    assert len(NAMES) == len(set(NAMES)) == len(RunConfig().to_dict())


@pytest.mark.parametrize("home, item", SETTINGS, ids=NAMES)
def test_every_flag_reaches_its_field(home, item):
    args = parsed(item)
    assert list(given(args)) == [item.name]
    config = RunConfig().with_overrides(**given(args))
    value = getattr(getattr(config, home), item.name)
    assert value == getattr(args, item.name) and value != item.default
    assert config.to_dict()[item.name] == value  # stored flat, by the field's name


@pytest.mark.parametrize("home, item", SETTINGS, ids=NAMES)
def test_every_flag_is_kept_or_changed_by_a_resume(home, item):
    args = parsed(item)
    stored = RunConfig()
    if item.meta.on_resume == "keep":
        assert item in settings_kept()
        with pytest.raises(UserError, match=f"^{item.flag} cannot change on --resume: a run keeps its own$"):
            refuse_given(args, settings_kept(), "cannot change on --resume: a run keeps its own")
        assert resumed_config(stored, args) == stored
    else:
        assert item.meta.on_resume == "change" and item not in settings_kept()
        refuse_given(args, settings_kept(), "cannot change on --resume: a run keeps its own")
        assert getattr(getattr(resumed_config(stored, args), home), item.name) == getattr(args, item.name)


@pytest.mark.parametrize("home, item", SETTINGS, ids=NAMES)
def test_every_flag_is_refused_changed_or_left_to_the_original_by_a_replay(home, item):
    args = parsed(item)
    stored = RunConfig.of(model="openai/gpt-5-mini", mutator="llm")
    if item.meta.on_replay == "refuse":
        with pytest.raises(UserError, match=f"^{item.flag} cannot be set with --replay: the replay repeats"):
            refuse_replayed(args)
        return
    refuse_replayed(args)
    replayed = replayed_config(stored, args, "/runs/original/archive.duckdb")
    assert replayed.llm.replay == "/runs/original/archive.duckdb"
    if item.name == "replay":
        return
    expected = (
        getattr(args, item.name) if item.meta.on_replay == "change" else getattr(getattr(stored, home), item.name)
    )
    assert item.meta.on_replay in ("change", "original")
    assert getattr(getattr(replayed, home), item.name) == expected


def test_a_model_alone_chooses_the_llm_mutator():
    args = build_parser().parse_args(["--model", "openai/gpt-5-mini"])
    assert config_from_args(args).improvement.mutator == "llm"
    args = build_parser().parse_args(["--model", "openai/gpt-5-mini", "--mutator", "offline"])
    assert config_from_args(args).improvement.mutator == "offline"
    assert config_from_args(build_parser().parse_args([])).improvement.mutator == "offline"


def test_the_flat_json_of_runs_config_reads_back_and_old_archives_still_read():
    config = RunConfig.of(budget=24, sandbox="process", model="m", mutator="llm", arena="single")
    assert RunConfig.from_dict(config.to_dict()) == config
    old = RunConfig.from_dict({"task": "binpack", "policy": "dgm", "a_key_of_another_version": 1})
    assert (old.search.policy, old.search.stages, old.llm.answer_format) == ("dgm", "none", "diff")
    assert RunConfig().search.stages == "default" and RunConfig().llm.answer_format == "auto"
    with pytest.raises(TypeError, match="no setting bugdet"):
        RunConfig.of(bugdet=3)


def test_the_lists_in_the_help_are_the_registries():
    from engine.config.arguments import help_line
    from engine.sandbox import SANDBOX_NAMES
    from search import POLICIES
    from search.final import FINAL_RULES
    from tasks import TASKS

    items = {item.name: item for _, item in SETTINGS}
    assert all(name in help_line(items["task"]) for name in TASKS)
    assert "{known}" not in help_line(items["task"])
    assert items["policy"].choices() == tuple(POLICIES)
    assert items["final"].choices() == tuple(FINAL_RULES)
    assert items["sandbox"].choices() == SANDBOX_NAMES
