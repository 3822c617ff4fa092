"""The vault's files: scan, read, atomic write, the writer lock."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from .errors import ConflictError, UsageError, VaultError
from .ids import check_id
from .places import private_dir
from .utf8 import mend

INDEX_DIR = ".amem"
LOCK_NOTICE = 3.0  # seconds of waiting for the write lock before saying so
# A larger file is not read as a note: an atomic note is far smaller, and indexing and
# embedding 20 MB takes minutes and a gigabyte of memory.
MAX_NOTE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class FileStat:
    mtime_ns: int
    size: int


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Vault:
    """A folder of Markdown notes. Paths handed out are relative to the root, POSIX style."""

    def __init__(self, root: Path, cache: Path | None = None):
        """`cache`: where a folder for the vault's index is made when the vault cannot be
        written (else such a vault is refused)."""
        self.root = root.expanduser().resolve()
        self.cache = cache
        self.read_only = False
        self.index_dir = self.root / INDEX_DIR
        self._lock: WriterLock | None = None
        self.bad_names: list[str] = []  # see `scan`

    # -- checks -----------------------------------------------------------
    def ensure(self, create: bool = False) -> None:
        if mend(str(self.root))[1]:  # SQLite and Chroma take their files' paths as UTF-8 text
            raise UsageError(f"the vault's path {mend(str(self.root))[0]} is not UTF-8",
                             hint="rename the folder: amem keeps its index in it, and the index needs a UTF-8 path")
        if not self.root.exists():
            if not create:
                raise VaultError(
                    f"the vault {self.root} does not exist",
                    hint="run `amem init` or pass --dir to an existing folder",
                )
            try:
                self.root.mkdir(parents=True)
            except OSError as exc:
                raise VaultError(f"cannot create the vault {self.root}: {exc.strerror}") from None
        if not self.root.is_dir():
            raise VaultError(f"{self.root} is not a folder", hint="pass --dir a folder")
        refused = self._not_writable()
        if refused is None:
            return
        if self.cache is None or refused.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise VaultError(
                f"cannot write to the vault {self.root}: {refused.strerror}",
                hint="check the folder's permissions or choose another with --dir",
            )
        # Read, not written (a read-only mount, someone else's folder): the index goes to
        # a private folder of this vault's own in the user's cache; writes are refused.
        try:
            self.index_dir = private_dir(self.cache / "vaults" / hashlib.sha256(os.fsencode(self.root)).hexdigest()[:16])
        except OSError as exc:
            raise VaultError(f"the vault {self.root} is read-only, and its index cannot be kept in {self.cache}: {exc}",
                             hint="set cache_dir (AMEM_CACHE_DIR) to a folder of yours") from None
        self.read_only = True

    def _not_writable(self) -> OSError | None:
        """Why amem may not write the vault and its `.amem/` (made here if missing); None if it may."""
        try:
            self.index_dir.mkdir(mode=0o700, exist_ok=True)  # the index and the server's socket: the owner's only
            if self.index_dir.stat().st_mode & 0o077:  # made by something else (an older amem, a copy, a umask)
                self.index_dir.chmod(0o700)
        except OSError as exc:
            return exc
        if not (os.access(self.root, os.W_OK) and os.access(self.index_dir, os.W_OK)):
            return PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return None

    def check_writable(self) -> None:
        """Refuse a write to a vault amem may only read (see `ensure`), before anything changes."""
        if self.read_only:
            raise VaultError(
                f"the vault {self.root} is read-only: nothing was changed",
                hint=f"make it writable (remount it read-write) to change it; reading and searching work as they are "
                     f"(the index is kept in {self.index_dir})",
            )

    def lock(self) -> "WriterLock":
        # One lock object per vault: it is re-entrant, two objects on one file would deadlock.
        if self._lock is None:
            self._lock = WriterLock(self.index_dir / "write.lock")
        return self._lock

    # -- paths ------------------------------------------------------------
    def path_for_new(self, note_id: str) -> str:
        check_id(note_id)
        return f"{note_id}.md"

    def abspath(self, rel: str) -> Path:
        if "/" not in rel and rel not in ("", ".", ".."):
            # A file right in the (resolved) root is inside it unless it is a symlink: one
            # lstat, where resolve() walks every folder of the path (an import calls this
            # ten times a note).
            path = self.root / rel
            try:
                if not stat.S_ISLNK(os.lstat(path).st_mode):
                    return path
            except FileNotFoundError:
                return path
            except OSError:
                pass
        path = (self.root / rel).resolve()
        if not path.is_relative_to(self.root):
            raise VaultError(f"the path {rel!r} is outside the vault")
        return path

    def scan(self) -> dict[str, FileStat]:
        """Every note file: `*.md` below the root, skipping hidden folders, symlinks that
        lead out of the vault and names that are not UTF-8 (`bad_names` lists those).
        (os.scandir: one stat per file.)"""
        found: dict[str, FileStat] = {}
        self.bad_names = []
        root = str(self.root)
        todo = [(root, "")]
        while todo:
            folder, prefix = todo.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(self.root):
                        continue
                    if mend(name)[1]:  # no index can hold its path (SQLite's text is UTF-8)
                        if name.endswith(".md") or entry.is_dir(follow_symlinks=False):
                            self.bad_names.append(mend(prefix + name)[0])
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        todo.append((entry.path, f"{prefix}{name}/"))
                    elif name.endswith(".md") and entry.is_file():  # not a FIFO or device: reading it would hang
                        st = entry.stat()
                        found[prefix + name] = FileStat(st.st_mtime_ns, st.st_size)
                except OSError:
                    continue
        return found

    def stat(self, rel: str) -> FileStat | None:
        """A regular file's modification time and size; None for anything else."""
        try:
            st = self.abspath(rel).stat()
        except OSError:
            return None
        return FileStat(st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        """The file's bytes, or its first `limit` + 1 (enough to tell it is too large)."""
        with open(self.abspath(rel), "rb") as fh:
            return fh.read(-1 if limit is None else limit + 1)

    # -- writes -----------------------------------------------------------
    def write_text(self, rel: str, text: str, expect_hash: str | None = None) -> FileStat:
        """Write atomically (temp file, fsync, rename, fsync of the folder). With
        `expect_hash`, refuse to overwrite a file whose bytes changed since they were read."""
        return self.write_many([(rel, text, expect_hash)])[0]

    def write_many(self, items: Sequence[tuple[str, str, str | None]]) -> list[FileStat]:
        """`write_text` for many files ((rel, text, expect_hash) each) with one flush to disk
        for all: every text goes to a temp file, the temp files are made durable together,
        then each is renamed over its file (a crash leaves each file whole, old or new). An
        import rewrites three files a note, and an fsync each cost it more than its index
        work. A conflict (see `write_text`) is found before anything is written."""
        self.check_writable()
        paths = [self.abspath(rel) for rel, _, _ in items]
        for (rel, _, expect_hash), path in zip(items, paths):
            if expect_hash is not None:
                _check_unchanged(rel, path, expect_hash)
        temps: list[str] = []
        renamed = 0
        rel = items[0][0] if items else ""
        try:
            for (rel, text, _), path in zip(items, paths):
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
                temps.append(tmp)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(text.encode("utf-8"))
                    if len(items) == 1:
                        fh.flush()
                        os.fsync(fh.fileno())
            if len(items) > 1:
                rel = f"{len(items)} files ({items[0][0]} first)"
                _sync_files(temps)
            for tmp, path, (rel, _, _) in zip(temps, paths, items):
                os.replace(tmp, path)
                renamed += 1
        except OSError as exc:
            raise VaultError(f"cannot write {rel}: {exc.strerror}", hint="check free space and permissions") from None
        finally:
            for tmp in temps[renamed:]:  # a failed write leaves no temp file behind
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            for parent in {path.parent for path in paths[:renamed]}:  # the renames are durable
                _fsync_dir(parent)
        stats = []
        for path in paths:
            st = path.stat()
            stats.append(FileStat(st.st_mtime_ns, st.st_size))
        return stats

    def delete(self, rel: str) -> None:
        self.check_writable()
        try:
            self.abspath(rel).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise VaultError(f"cannot delete {rel}: {exc.strerror}") from None


def _check_unchanged(rel: str, path: Path, expect_hash: str) -> None:
    try:
        current = content_hash(path.read_bytes())
    except FileNotFoundError:
        current = None
    if current != expect_hash:
        raise ConflictError(
            f"{rel} changed on disk while amem was working on it",
            hint="run the command again; your edit was kept",
        )


def _sync_files(paths: list[str]) -> None:
    """Make the files' data durable: one `syncfs` of their file system where Linux has
    it, else an fsync each. (`syncfs` reports a failed writeback since Linux 5.8.)"""
    syncfs = _syncfs()
    if syncfs is not None:
        fd = os.open(paths[0], os.O_RDONLY)
        try:
            if syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@functools.cache
def _syncfs():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only a batch write needs it, `amem --help` does not

    try:
        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class WriterLock:
    """The inter-process lock every writer of the vault and its index holds.

    Re-entrant within a process, so a service may call another that locks too."""

    def __init__(self, path: Path):
        self._lock = FileLock(str(path))

    def __enter__(self) -> "WriterLock":
        # Wait as long as the holder needs (a reindex may take minutes; the OS frees the
        # lock of a process that dies), and say so once, so a waiting command is not a mystery.
        try:
            self._lock.acquire(timeout=LOCK_NOTICE)
        except Timeout:
            print("amem: waiting for another amem process that is writing to this vault...", file=sys.stderr, flush=True)
            self._lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def held(self) -> bool:
        """Whether this thread holds it."""
        return self._lock.is_locked
