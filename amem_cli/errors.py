"""Errors that reach the user as one line plus a hint, never as a traceback."""

from __future__ import annotations


class AmemError(Exception):
    """A failure the user can act on. The CLI prints `message` and `hint` and exits."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(AmemError):
    """Bad input from the user (empty content, bad option value)."""

    exit_code = 2


class NotFoundError(AmemError):
    """An id or file that does not exist."""

    exit_code = 3


class VaultError(AmemError):
    """The vault folder is missing, unreadable or not writable."""

    exit_code = 4


class NoteFormatError(AmemError):
    """A note file that cannot be parsed (bad frontmatter)."""

    exit_code = 5

    def __init__(self, path: str, line: int | None, problem: str):
        where = f"{path}:{line}" if line else path
        super().__init__(
            f"{where}: {problem}",
            hint="fix the frontmatter in an editor; the file is left untouched",
        )
        self.path = path
        self.line = line
        self.problem = problem


class ConflictError(AmemError):
    """A file changed on disk between reading and writing it."""

    exit_code = 6


class IndexMismatchError(AmemError):
    """The index was built with another embedding model."""

    exit_code = 7


class InconsistentError(AmemError):
    """`amem doctor` found the files, the index, the vectors or the queue out of step."""

    exit_code = 8
