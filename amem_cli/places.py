"""Where amem keeps what is not in a vault: the user's cache folder (the ONNX model, the
index of a vault amem cannot write), and folders of this user's only."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def cache_root(cache_dir: str | os.PathLike | None) -> Path:
    """The `cache_dir` setting, or the platform's user cache folder."""
    if cache_dir is None:
        from platformdirs import user_cache_dir

        cache_dir = user_cache_dir("amem")
    return Path(cache_dir).expanduser()


def private_dir(path: Path) -> Path:
    """`path`, a folder only this user may enter, made with mode 0700 if missing.
    PermissionError when it is not private (someone else's, open to others, a symlink):
    someone else could have made it, and put their own files in it."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise PermissionError(f"{path} is not a folder of this user's only")
    return path
