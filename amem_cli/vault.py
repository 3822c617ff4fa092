"""The vault's files: scan, read, atomic write, the writer lock."""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import secrets
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from filelock import FileLock, Timeout

from .errors import ConflictError, NoteFormatError, UsageError, VaultError
from .ids import check_id, id_from_stem
from .markdown import read_note
from .models import Note
from .places import INDEX_DIR, cached_index_dir, hidden, private_dir
from .utf8 import mend

LOCK_NOTICE = 3.0  # seconds of waiting for the write lock before saying so
# A larger file is not read as a note: an atomic note is far smaller, and indexing and
# embedding 20 MB takes minutes and a gigabyte of memory.
MAX_NOTE_BYTES = 2 * 1024 * 1024
# How long amem waits for an empty note file to get its bytes: editors that truncate the
# file, close it, open it again and write save so, and amem must not take the moment
# between for the note (it would write its frontmatter into the empty file, and the
# editor's write then gives the file two).
SETTLE = 1.0


@dataclass(frozen=True)
class FileStat:
    mtime_ns: int
    size: int


# Which file a path holds: its inode and the hash of its bytes (None while a program has
# it open for writing: a save in place under way, its bytes not all there yet).
Version = tuple[int, str | None]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_note_file(path: str, data: bytes, *, own_id: bool = True,
                    date_order: str = "auto") -> tuple[Note | None, str | None, bool]:
    """The note in a file's bytes (or the problem, in one line), and whether the file
    names its id (else the id is the one its name gives). `own_id=False`: a file from
    elsewhere (an import) whose `id` amem does not use. `date_order`: how a date that
    reads both ways is read (`timeutil.DATE_ORDERS`)."""
    if not data.strip():
        return None, (f"{path}: empty: a save under way, or a note with nothing in it; amem leaves it as it is "
                      "and reads it again once it holds a note"), False
    if len(data) > MAX_NOTE_BYTES:
        return None, f"{path}: larger than a note may be ({MAX_NOTE_BYTES // 2**20} MiB); split it; it was skipped", False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, f"{path}:{line}: not UTF-8 text; the file was skipped", False
    if "\x00" in text:
        return None, f"{path}: a binary file, not a Markdown note; it was skipped", False
    try:
        note, named = read_note(text, path=path, fallback_id=id_from_stem(PurePosixPath(path).stem), own_id=own_id,
                                date_order=date_order)
    except NoteFormatError as exc:
        return None, exc.message, False
    return note, None, named


class Vault:
    """A folder of Markdown notes. Paths handed out are relative to the root, POSIX style."""

    def __init__(self, root: Path, cache: Path | None = None, date_order: str = "auto"):
        """`cache`: where a folder for the vault's index is made when the vault cannot be
        written (else such a vault is refused). `date_order`: how the vault's files write
        a date that reads both ways (the `date_order` setting)."""
        self.root = root.expanduser().resolve()
        self.cache = cache
        self.date_order = date_order
        self.read_only = False
        self.index_dir = self.root / INDEX_DIR
        self._lock: WriterLock | None = None
        self.bad_names: list[str] = []  # see `scan`

    def parse(self, path: str, data: bytes) -> tuple[Note | None, str | None, bool]:
        """`parse_note_file` of one of the vault's files, its dates read in the vault's order."""
        return parse_note_file(path, data, date_order=self.date_order)

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
            self.index_dir = private_dir(cached_index_dir(self.cache, self.root))
        except OSError as exc:
            raise VaultError(f"the vault {self.root} is read-only, and its index cannot be kept in {self.cache}: {exc}",
                             hint="set cache_dir (AMEM_CACHE_DIR) to a folder of yours") from None
        self.read_only = True
        self.check_index_links()

    def check_index_links(self) -> None:
        """Refuse a symlink anywhere in the index folder (see `refuse_links`): when a
        command starts, and before each request to a long-lived server."""
        refuse_links(self.index_dir)

    def _not_writable(self) -> OSError | None:
        """Why amem may not write the vault and its `.amem/` (made here if missing); None if it may."""
        try:
            try:
                self.index_dir.mkdir(mode=0o700)  # the index and the server's socket: the owner's only
            except FileExistsError:
                pass  # a folder, a link or a file: checked next
            _check_index_dir(self.index_dir)
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
        """The file `rel` names, refused when it leads out of the vault or into a hidden
        folder (`.amem/`'s lock and index, `.git/`): a note symlinked there is not a note."""
        if "/" not in rel and rel not in ("", ".", "..", INDEX_DIR):
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
        if self._in_hidden_folder(path):
            raise VaultError(f"the path {rel!r} leads into a hidden folder of the vault, where no note is",
                             hint="remove the symlink, or move the file it points to into the vault")
        return path

    def _in_hidden_folder(self, path: Path) -> bool:
        """Whether the resolved `path` is, or is in, a folder the scan does not look into."""
        parts = path.relative_to(self.root).parts
        return parts[:1] == (INDEX_DIR,) or any(map(hidden, parts[:-1]))

    def _is_note_place(self, path: Path) -> bool:
        """Whether a resolved path may hold a note: in the vault, in no hidden folder."""
        return path.is_relative_to(self.root) and not self._in_hidden_folder(path)

    def scan(self) -> dict[str, FileStat]:
        """Every note file: `*.md` below the root, skipping hidden folders, symlinks that
        lead out of the vault or into a hidden folder, and names that are not UTF-8
        (`bad_names` lists those). (os.scandir: one stat per file.)"""
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
                if hidden(name):
                    continue
                try:
                    if entry.is_symlink() and not self._is_note_place(Path(entry.path).resolve()):
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
        """A regular file's modification time and size; None for anything else (and for
        a path `abspath` refuses: the scan does not see it either)."""
        try:
            st = self.abspath(rel).stat()
        except (OSError, VaultError):
            return None
        return FileStat(st.st_mtime_ns, st.st_size) if stat.S_ISREG(st.st_mode) else None

    def read_bytes(self, rel: str, limit: int | None = None) -> bytes:
        """The file's bytes, or its first `limit` + 1 (enough to tell it is too large)."""
        with open(self.abspath(rel), "rb") as fh:
            return fh.read(-1 if limit is None else limit + 1)

    def read_settled(self, rel: str, limit: int | None = None) -> bytes | None:
        """`read_bytes`; for a file emptied in the last SETTLE seconds (a save under way),
        its bytes once it has some, within SETTLE seconds, else the empty bytes; None when
        it is still empty and a program has it open for writing (a save in place)."""
        deadline = time.monotonic() + SETTLE
        while True:
            with open(self.abspath(rel), "rb") as fh:
                data = fh.read(-1 if limit is None else limit + 1)
                if data.strip():
                    return data
                if not _no_writer(fh.fileno()):
                    if time.monotonic() >= deadline:
                        return None
                elif time.monotonic() >= deadline or time.time() - os.fstat(fh.fileno()).st_mtime > SETTLE:
                    return data  # empty for a while: no save is coming
            time.sleep(0.02)

    # -- writes -----------------------------------------------------------
    def write_text(self, rel: str, text: str, expect_hash: str | None = None) -> FileStat:
        """Write atomically (temp file, fsync, rename, fsync of the folder). `expect_hash`
        is the hash of the bytes the new text was made from: a file whose bytes are no
        longer those is left as it is (ConflictError). None: a new file, which never
        replaces a file that is there."""
        return self.write_many([(rel, text, expect_hash)])[0]

    def write_many(self, items: Sequence[tuple[str, str, str | None]],
                   stamped: Sequence[datetime | None] | None = None) -> list[FileStat]:
        """`write_text` for many files ((rel, text, expect_hash) each) with one flush to disk
        for all: every text goes to a temp file, the temp files are made durable together,
        then each takes its file's place (a crash leaves each file whole, old or new). An
        import rewrites three files a note, and an fsync each cost it more than its index
        work. `stamped`: each file's modification time (the `updated` time its
        note says: a batch is stamped, rendered, then written, which takes seconds on a
        loaded machine, and a file saved seconds after its stamp looks edited by a person,
        `Pipeline.hand_edited`).

        The check that a file is unchanged holds up to its replacement: the new version
        is swapped in (renameat2, one atomic step) and the file swapped out must be the
        one read, with no save in place under way (a glance at the file just before
        spares most swaps that would fail; where renameat2 is not, the full check is
        made right before the rename). If not, a person saved in between: their file
        goes back, the files of the batch already in place are put back too (unless a
        person saved over one since: theirs stays), and ConflictError lets the caller
        redo its change on the new bytes. A new file never replaces one that came
        meanwhile."""
        self.check_writable()
        paths = [self.abspath(rel) for rel, _, _ in items]
        seen = [_unchanged(rel, path, expect) for (rel, _, expect), path in zip(items, paths)]
        temps: list[str] = []
        stats: list[FileStat] = []
        versions: list[Version] = []
        placed: list[_Placed] = []
        rel = items[0][0] if items else ""
        try:
            try:
                for (rel, text, _), path, st, at in zip(items, paths, seen, stamped or [None] * len(items)):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    fd, tmp = _new_temp(path, None if st is None else stat.S_IMODE(st.st_mode))
                    temps.append(tmp)
                    data = text.encode("utf-8")
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
                        fh.flush()
                        if at is not None:
                            os.utime(fh.fileno(), ns=(time.time_ns(), int(at.timestamp()) * 10**9))
                        if len(items) == 1:
                            os.fsync(fh.fileno())
                        st = os.fstat(fh.fileno())  # the file's, as amem leaves it (a rename keeps it)
                    stats.append(FileStat(st.st_mtime_ns, st.st_size))
                    versions.append((st.st_ino, content_hash(data)))
                if len(items) > 1:
                    rel = f"{len(items)} files ({items[0][0]} first)"
                    _sync_files(temps)
                for tmp, path, (rel, _, expect), ours, st in zip(temps, paths, items, versions, seen):
                    placed.append(_place(tmp, path, rel, expect, ours, st))
            except BaseException:
                for done in reversed(placed):
                    done.undo()
                raise
        except OSError as exc:
            raise VaultError(f"cannot write {rel}: {exc.strerror}", hint="check free space and permissions") from None
        finally:
            for tmp in temps:  # no temp file is left: amem's unused, or the version replaced
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            for parent in {done.path.parent for done in placed}:  # the renames are durable
                _fsync_dir(parent)
        return stats

    def delete(self, rel: str) -> None:
        self.check_writable()
        try:
            self.abspath(rel).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise VaultError(f"cannot delete {rel}: {exc.strerror}") from None


def _check_index_dir(path: Path) -> None:
    """`.amem/` must be a real folder holding no symlinks, at any depth: a vault (a cloned
    repository) could carry a link there, and amem would then chmod, lock, truncate or
    write its index into whatever the link names, or copy it into the vault (a link in the
    trash, brought back by `undo`). Opened without following a link, so the chmod goes to
    the folder that was checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise VaultError(f"{path} is not a folder (a symlink or a file): amem keeps its index only in a real folder",
                         hint=f"remove it (`rm {path}`); amem then makes a new index from the notes") from None
    try:
        if os.fstat(fd).st_mode & 0o077:  # made by something else (an older amem, a copy, a umask)
            os.fchmod(fd, 0o700)
        links = _links_below(fd)
    finally:
        os.close(fd)
    _refuse(path, links)


def refuse_links(folder: Path) -> None:
    """VaultError naming the first symlink that is `folder` or lies below it (at any
    depth), if there is one: amem reads and writes only its own files under `.amem/`.
    Called before each use of a part of the index a long-lived process opens again (the
    trash, the vector store), as well as when a command starts."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return  # not made yet
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        if os.path.islink(folder):
            _refuse(folder.parent, [folder.name])
        return  # a file where a folder should be: its user says so
    try:
        links = _links_below(fd)
    finally:
        os.close(fd)
    _refuse(folder, links)


def links_under(folder: Path) -> list[str]:
    """The symlinks below `folder`, at any depth, relative to it (POSIX style, sorted);
    none is followed, so a loop of links cannot hang the walk."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        return _links_below(fd)
    finally:
        os.close(fd)


def _links_below(fd: int, prefix: str = "") -> list[str]:
    with os.scandir(fd) as entries:
        entries = list(entries)
    found = []
    for entry in entries:
        if entry.is_symlink():
            found.append(prefix + entry.name)
        elif entry.is_dir(follow_symlinks=False):
            try:
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                continue  # removed meanwhile
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link now, where a folder was
                    found.append(prefix + entry.name)
                    continue
                raise
            try:
                found += _links_below(sub, f"{prefix}{entry.name}/")
            finally:
                os.close(sub)
    return sorted(found)


def _refuse(folder: Path, links: list[str]) -> None:
    if links:
        raise link_refused(folder / links[0], more=len(links) - 1)


def link_refused(path: Path, more: int = 0) -> VaultError:
    """The error for a symlink found in the index folder (and `more` others)."""
    others = f" (and {more} more)" if more else ""
    return VaultError(f"{path} is a symlink{others}: amem follows no link inside its index folder",
                      hint=f"remove it (`rm {path}`); amem makes its own files again from the notes")


def _conflict(rel: str, saving: bool = False) -> ConflictError:
    """`saving`: another program has the file open for writing."""
    return ConflictError(
        f"{rel} {'is being saved by another program' if saving else 'changed on disk while amem was working on it'}",
        hint="run the command again; your edit was kept",
    )


def _version(path: Path | str) -> Version | None:
    try:
        with open(path, "rb") as fh:
            return _version_of(fh)
    except FileNotFoundError:
        return None


def _version_of(fh) -> Version:
    inode = os.fstat(fh.fileno()).st_ino
    return inode, (content_hash(fh.read()) if _no_writer(fh.fileno()) else None)


def _no_writer(fd: int) -> bool:
    """Whether no program has the file open for writing: Linux refuses a read lease on a
    file that one has (taken and given back at once). True where it cannot tell."""
    try:
        import fcntl
        import signal

        # Should a program open the file for writing in the moment the lease is held, the
        # kernel tells the holder with SIGIO, which ends a process by default: SIGURG is
        # ignored by default.
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except BlockingIOError:
        return False
    except (ImportError, AttributeError, OSError):  # not Linux, not the file's owner, a filesystem without leases
        return True
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return True


def _unchanged(rel: str, path: Path, expect_hash: str | None) -> os.stat_result | None:
    """The file amem means to replace (its new version keeps its mode), after checking it
    still holds the bytes amem read and no save to it is under way; None for a new file,
    after checking there is still none."""
    if expect_hash is None:
        if os.path.lexists(path):
            raise _conflict(rel)
        return None
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            current = _version_of(fh)[1]
    except FileNotFoundError:
        raise _conflict(rel) from None
    if current != expect_hash:
        raise _conflict(rel, saving=current is None)
    return st


def _glance(file: Path | os.stat_result) -> tuple[int, int, int] | None:
    """A file's inode, size and modification time: a save changes one of them (a save in
    place within the same clock tick and at the same size aside)."""
    try:
        st = file if isinstance(file, os.stat_result) else os.stat(file)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _new_temp(path: Path, mode: int | None) -> tuple[int, str]:
    """A temp file beside `path`, named as `amem doctor` knows them: with the permissions
    of the file it replaces, or, for a new file, those an editor gives one (0666 less the
    umask, which the kernel takes off)."""
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            os.fchmod(fd, mode)
        return fd, tmp


@dataclass
class _Placed:
    """A file amem put in place, and how to take it back."""

    path: Path
    tmp: str  # the temp file's name: after a swap, where the file replaced is
    ours: Version  # amem's file
    theirs: Version | None = None  # after a swap, the file replaced
    new: bool = False

    def undo(self) -> None:
        if self.theirs is not None:
            _swap_back(self.tmp, self.path, self.ours, self.theirs)
        elif self.new and _version(self.path) == self.ours:
            self.path.unlink(missing_ok=True)
        # else replaced where there is no swap: the old version is gone, this file stays


def _place(tmp: str, path: Path, rel: str, expect_hash: str | None, ours: Version,
           seen: os.stat_result | None) -> _Placed:
    """Put the temp file `tmp` (amem's file `ours`) at `path` if the file there is still
    the one checked (`seen`) and holds the bytes amem read (hash `expect_hash`), or, for
    a new file (None), if there is still none."""
    # A glance again now that amem's file is durable (a batch's flush takes a while), so
    # that a swap seldom has to be undone; the swap's own check is the one that holds.
    if os.path.lexists(path) if seen is None else _glance(path) != _glance(seen):
        raise _conflict(rel)
    try:
        done = _renameat2(tmp, path, RENAME_NOREPLACE if expect_hash is None else RENAME_EXCHANGE)
    except (FileExistsError, FileNotFoundError):  # a file came where there was none, or the file went
        raise _conflict(rel) from None
    if not done:  # no renameat2: the full check, as close to the rename as can be
        _unchanged(rel, path, expect_hash)
        os.replace(tmp, path)
        return _Placed(path, tmp, ours, new=expect_hash is None)
    if seen is None:
        return _Placed(path, tmp, ours, new=True)
    if os.lstat(tmp).st_ino != seen.st_ino:
        # A person saved since the check, as most editors do, by renaming a new file over
        # the note: theirs goes back before anything reads amem's, made from older bytes.
        _swap_back(tmp, path, ours)
        raise _conflict(rel)
    theirs = _version(tmp)
    if theirs is None or theirs[1] != expect_hash:  # written in place since the check, or being written
        _swap_back(tmp, path, ours, theirs)
        raise _conflict(rel, saving=theirs is not None and theirs[1] is None)
    return _Placed(path, tmp, ours, theirs)


def _swap_back(tmp: str, path: Path, ours: Version, theirs: Version | None = None) -> None:
    """Undo a swap that put amem's file `ours` at `path` and the file it replaced (its
    version `theirs`, when known) at `tmp`, unless a person has saved over amem's file
    since: their save is newer than both, and stays. (Each swap must take out the file
    put in before, else what it took out is such a save, made in the moment between, or
    one under way, and goes back in.)"""
    expected, held = ours, theirs
    while True:
        try:
            there = os.lstat(path).st_ino
        except FileNotFoundError:  # removed or renamed away: what is held goes back, unless a file came
            try:
                _renameat2(tmp, path, RENAME_NOREPLACE)
            except FileExistsError:
                pass
            return
        if expected is None or there != expected[0]:  # a newer save is there; what is held is older
            return
        try:
            if not _renameat2(tmp, path, RENAME_EXCHANGE):
                raise OSError(errno.ENOTSUP, "renameat2 stopped working")  # it swapped a moment ago
        except FileNotFoundError:
            continue
        taken = _version(tmp)
        if taken == expected:
            return
        expected, held = held or _version(path), taken


RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2  # renameat2's flags (linux/fs.h)
AT_FDCWD = -100


def _renameat2(src: str | Path, dst: str | Path, flags: int) -> bool:
    """Linux's renameat2: False where the system or the filesystem has none."""
    call = _renameat2_call()
    if call is None:
        return False
    if call(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    import ctypes

    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(dst))


@functools.cache
def _renameat2_call():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library older than glibc 2.28
        return None


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
