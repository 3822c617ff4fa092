"""Where amem keeps things: the vault's index folder, the user's cache folder (the ONNX
model, the index of a vault amem cannot write), folders of this user's only; and which
folders of a vault hold no notes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

# The vault's index, derived from its notes (SQLite, vectors, the queue, the server's socket).
INDEX_DIR = ".amem"


def hidden(name: str) -> bool:
    """Whether a file or folder of a vault is hidden: no note is looked for in a hidden
    folder (`.amem/`, `.git/`, an editor's), and no hidden file is a note."""
    return name.startswith(".")


def cache_root(cache_dir: str | os.PathLike | None) -> Path:
    """The `cache_dir` setting, or the platform's user cache folder."""
    if cache_dir is None:
        from platformdirs import user_cache_dir

        cache_dir = user_cache_dir("amem")
    return Path(cache_dir).expanduser()


def cached_index_dir(cache: Path, root: Path) -> Path:
    """Where the index of a vault amem may only read is kept: a folder of its own in the cache."""
    import hashlib

    return cache / "vaults" / hashlib.sha256(os.fsencode(root)).hexdigest()[:16]


def index_db(root: Path, cache_dir: str | os.PathLike | None) -> Path | None:
    """The vault's index file as it is (None: there is none yet): in its `.amem/`, or, for
    a vault amem may only read, in the cache (`cached_index_dir`)."""
    own = root / INDEX_DIR
    for folder in ([own] if os.access(own, os.W_OK) else []) + [cached_index_dir(cache_root(cache_dir), root)]:
        if (folder / "index.db").is_file():
            return folder / "index.db"
    return None


def private_dir(path: Path) -> Path:
    """`path`, a folder only this user may enter, made with mode 0700 if missing.
    PermissionError when it is not private (someone else's, open to others, a symlink):
    someone else could have made it, and put their own files in it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{path} is not a folder of this user's only")
    return path
