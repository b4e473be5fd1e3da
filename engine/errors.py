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
