"""The Slurm executor's options as the user gives them (--slurm-option KEY=VALUE, --slurm-time), checked.

Standard library only: the configuration checks them before anything of Slurm is imported."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["check_slurm_time", "parse_slurm_options"]

# the sbatch options the executor sets itself (its files, one job per evaluation)
RESERVED = frozenset({"output", "error", "wrap", "array", "parsable", "chdir", "signal", "open-mode"})
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
# sbatch --time: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or unlimited/infinite
_TIME = re.compile(r"(\d+(:\d{1,2}){0,2}|\d+-\d{1,2}(:\d{1,2}){0,2}|(?i:unlimited|infinite))")


def parse_slurm_options(pairs: Sequence[str]) -> dict[str, str]:
    """['mem=4G', 'qos=low'] -> {'mem': '4G', 'qos': 'low'}: sbatch's long options, by name with '_' for '-'.

    ValueError (one line) for anything else: no '=', an empty key or value, a key that is not an option
    name, an option the executor sets itself."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip().removeprefix("--")
        if not eq or not key or not value.strip():
            raise ValueError(f"--slurm-option takes KEY=VALUE (an sbatch option, e.g. mem=4G), not {pair!r}")
        if not _NAME.fullmatch(key):
            raise ValueError(f"--slurm-option {pair!r}: {key!r} is not an sbatch option name")
        if key.replace("_", "-") in RESERVED:
            raise ValueError(f"--slurm-option {pair!r}: the executor sets --{key.replace('_', '-')} itself")
        options[key.replace("-", "_")] = value.strip()
    return options


def check_slurm_time(text: str) -> str:
    """`text` if sbatch --time takes it (10, 30:00, 2:00:00, 1-12, 1-12:30:00, unlimited); else ValueError."""
    if not _TIME.fullmatch(text.strip()):
        raise ValueError(
            f"--slurm-time takes what sbatch --time does (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS), not {text!r}"
        )
    return text.strip()
