"""Errors that reach the user as one line plus a hint, never as a traceback."""

from __future__ import annotations

import errno
import os


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


def storage_error(exc: BaseException, where: str | os.PathLike) -> AmemError | None:
    """A write refused by the system (a full disk, a read-only filesystem), from whichever
    layer noticed it (a file, SQLite, the vector store), as one line; None for anything else.
    SQLite may call a full disk a 'disk I/O error': the filesystem of `where` tells."""
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    if code not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) and not any(
        s in text for s in ("disk is full", "disk i/o error", "readonly database", "read-only file system", "no space left")
    ):
        return None
    try:
        fs = os.statvfs(where)
    except OSError:
        fs = None
    if code == errno.EROFS or "read" in text and "only" in text or (fs is not None and fs.f_flag & os.ST_RDONLY):
        return VaultError(f"the vault {where} is on a read-only filesystem: the command could not write",
                          hint="remount it read-write (reading and searching work as they are)")
    if code in (errno.ENOSPC, errno.EDQUOT) or "full" in text or "no space" in text or (
        fs is not None and fs.f_bavail * fs.f_frsize < 1 << 20
    ):
        return VaultError(f"no space left on the disk of the vault {where}: the command stopped",
                          hint="free some space and run it again; notes already stored are kept (`amem doctor` checks)")
    return None  # an I/O error with room and write access: not ours to explain
