"""Errors that end something: a user's bad input (the CLI prints its one line and exits with code 2), and a run
that must stop (`StopRun`). Imports nothing, so the LLM client, the mutators and the loop all can."""

from __future__ import annotations

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """Bad input: a flag, a path, an archive. The message is the whole story, in one line."""


class StopRun(Exception):
    """The run stops taking new work: what is in flight finishes and is stored, and a resume goes on (the LLM
    budget is spent, say). Raised by a mutator's expansion or met by an evaluation; the message is one line."""


class FatalStop(StopRun):
    """A stop the user must act on before a resume can help (a bad API key, an unknown model)."""


def no_space(folder: object, doing: str, then: str = "run it again") -> UserError:
    """The one line for a write that found the disk (or the quota) full: where, what was being written, what
    is left of it, how to go on."""
    return UserError(f"no space left on the device holding {folder} ({doing}); free space, then {then}")
