"""Errors a user can cause: the CLI prints their one line and exits with code 2."""

from __future__ import annotations

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """Bad input: a flag, a path, an archive. The message is the whole story, in one line."""
