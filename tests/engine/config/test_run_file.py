"""Run files (engine/config/run_file.py): TOML written from a configuration reads back as the same one, for every
declared setting; every refusal is one line naming the file and the key."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from engine.config import RunConfig
from engine.config.arguments import config_of
from engine.config.run_file import Key, check_values, keys, read_run_file, to_toml
from engine.errors import UserError


def other_value(key: Key) -> Any:
    """A value of the setting's declared type that is not its default (its checks aside)."""
    default = key.item.default
    choices = key.item.choices()
    if choices:
        return next(c for c in choices if c != default)
    kind = key.kinds[0]
    if kind is list:
        return [f"{key.name}-{i}" for i in range(key.item.meta.nargs or 2)]
    if kind is bool:
        return not default
    if kind is int:
        return (default or 0) + 7
    if kind is float:
        return (default or 0.0) + 2.5
    return f"{key.name}-value"


def every_key() -> list[Key]:
    return [key for named in keys().values() for key in named.values()]


def read_text(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "run.toml"
    path.write_text(text)
    return read_run_file(path)


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(UserError) as caught:
        read_text(tmp_path, text)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / "run.toml") + ": ")
    return message


def test_keys_are_the_declared_settings_in_their_sections():
    declared = [(section, item.name) for section, item in RunConfig.settings()]
    assert [(key.section, key.name) for key in every_key()] == declared
    assert list(keys()) == [name for name, _ in RunConfig.sections()]
    for key in every_key():  # each setting's type was read from its annotation
        assert key.kinds and all(kind in (bool, int, float, str, list) for kind in key.kinds), key


def test_defaults_round_trip(tmp_path):
    text = to_toml(RunConfig())
    assert config_of(read_text(tmp_path, text)) == RunConfig()


@pytest.mark.parametrize("key", every_key(), ids=lambda k: k.spelled)
def test_each_setting_round_trips_with_a_value_not_its_default(tmp_path, key):
    value = other_value(key)
    config = RunConfig.of(**{key.name: value})
    text = to_toml(config)
    read = read_text(tmp_path, text)
    assert config_of(read) == config
    assert config_of(read).to_dict()[key.name] == value


def test_every_setting_changed_at_once_round_trips(tmp_path):
    config = RunConfig.of(**{key.name: other_value(key) for key in every_key()})
    assert config_of(read_text(tmp_path, to_toml(config))) == config


def test_a_value_left_none_is_left_out_and_reads_back_as_none(tmp_path):
    optional = [key for key in every_key() if key.optional]
    assert optional  # target, final, image, ...
    parsed = tomllib.loads(to_toml(RunConfig()))
    for key in optional:
        assert key.name not in parsed[key.section]
        assert getattr(getattr(config_of(read_text(tmp_path, "")), key.section), key.name) is None


def test_mutator_is_written_only_where_the_model_does_not_imply_it(tmp_path):
    implied = RunConfig.of(model="openai/gpt-5-mini", mutator="llm")
    assert "mutator" not in tomllib.loads(to_toml(implied))["improvement"]
    assert config_of(read_text(tmp_path, to_toml(implied))) == implied
    against = RunConfig.of(model="openai/gpt-5-mini", mutator="offline")
    assert tomllib.loads(to_toml(against))["improvement"]["mutator"] == "offline"
    assert config_of(read_text(tmp_path, to_toml(against))) == against


def test_sections_come_in_declaration_order_each_setting_under_its_help():
    text = to_toml(RunConfig())
    headers = [line for line in text.splitlines() if line.startswith("[")]
    assert headers == [f"[{name}]" for name, _ in RunConfig.sections()]
    lines = text.splitlines()
    at = lines.index("budget = 200")
    assert lines[at - 1].startswith("#") and "(default: 200" in "\n".join(lines[at - 3 : at])


def test_the_help_above_a_setting_is_the_flags_with_its_names_filled_in():
    """A help that lists an open set's names (`--task`'s built-in tasks) lists them in the file too, as
    `--help` does: no placeholder is left for the reader."""
    from tasks import TASKS

    text = to_toml(RunConfig())
    assert "{known}" not in text
    assert ", ".join(TASKS) in " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))


def test_an_integer_for_a_float_setting_is_a_float(tmp_path):
    read = read_text(tmp_path, "[output]\nlive_interval = 3\n")
    assert read == {"live_interval": 3.0} and isinstance(read["live_interval"], float)


def test_unknown_key_says_what_it_meant_and_what_the_section_takes(tmp_path):
    message = refusal(tmp_path, "[search]\nbudgt = 20\n")
    assert "[search] budgt is not a setting (did you mean budget?)" in message
    assert "policy" in message and "seed" in message


def test_unknown_section_says_the_near_one(tmp_path):
    message = refusal(tmp_path, "[serch]\nbudget = 20\n")
    assert "unknown section [serch] (did you mean [search]?)" in message


def test_a_key_in_the_wrong_section_names_its_own(tmp_path):
    assert "model is a setting of [llm], not [search]" in refusal(tmp_path, '[search]\nmodel = "m"\n')
    assert "budget belongs in [search]" in refusal(tmp_path, "budget = 20\n")


@pytest.mark.parametrize(
    "text, said",
    [
        ('[search]\nbudget = "x"\n', "[search] budget must be a whole number, not 'x'"),
        ("[search]\nbudget = 2.5\n", "[search] budget must be a whole number, not 2.5"),
        ("[search]\nbudget = true\n", "[search] budget must be a whole number, not true"),
        ('[benchmark]\nbootstrap = "yes"\n', "[benchmark] bootstrap must be true or false"),
        ('[search]\ntarget = "high"\n', "[search] target must be a number (leave it out for none)"),
        ('[evaluation]\ngateway_tls = ["cert.pem"]\n', "[evaluation] gateway_tls must be a list of 2 strings"),
        ("[evaluation]\nsandbox = 3\n", "[evaluation] sandbox must be one of: 'auto'"),
        ("[search]\nbudget = [1]\n", "not a list"),
        ("search = 3\n", "[search] must be a table of settings"),
    ],
)
def test_a_wrong_type_names_the_key_and_what_it_takes(tmp_path, text, said):
    assert said in refusal(tmp_path, text)


def test_a_toml_syntax_error_is_one_line(tmp_path):
    assert "not valid TOML" in refusal(tmp_path, "[search]\nbudget = \n")
    assert "not valid TOML" in refusal(tmp_path, "[search\n")


def test_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(UserError, match="no such run file"):
        read_run_file(tmp_path / "absent.toml")
    with pytest.raises(UserError, match="cannot read the run file"):
        read_run_file(tmp_path)  # a folder
    (tmp_path / "latin.toml").write_bytes(b'[search]\ntask = "caf\xe9"\n')
    with pytest.raises(UserError, match="not UTF-8"):
        read_run_file(tmp_path / "latin.toml")


@pytest.mark.parametrize(
    "from_file, said",
    [
        ({"workers": -1}, "[search] workers = -1: --workers must be 1 or more"),
        ({"budget": 0}, "[search] budget = 0: --budget must be a positive"),
        ({"policy": "nope"}, "[search] policy = \"nope\": unknown policy 'nope'"),
        ({"sandbox": "vm"}, "[evaluation] sandbox = \"vm\": unknown sandbox 'vm'"),
        ({"seed": 4, "final_k": 3}, "[search] final_k = 3: --final-k needs --final max_mean_k"),
    ],
)
def test_an_invalid_value_names_the_files_key(from_file, said):
    with pytest.raises(UserError) as caught:
        check_values("run.toml", from_file, {})
    assert str(caught.value).startswith(f"run.toml: {said}")


def test_values_valid_together_pass_and_a_flag_can_mend_the_file():
    check_values("run.toml", {"final": "max_mean_k", "final_k": 3}, {})
    check_values("run.toml", {"final_k": 3}, {"final": "max_mean_k"})  # the flag completes it
    check_values("run.toml", {"budget": 0}, {"budget": 20})  # the flag overrides the bad value
    check_values("run.toml", {}, {"budget": 0})  # the flag alone at fault: its own check names it, later


def test_a_rule_across_the_files_keys_names_the_file():
    # each key is fine alone (with the defaults); together they break a rule of [evaluation]
    with pytest.raises(UserError, match=r"^run.toml: --task-python is for --sandbox process or bwrap"):
        check_values("run.toml", {"sandbox": "docker", "task_python": "/usr/bin/python3"}, {})
