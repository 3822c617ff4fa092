"""Which note files changed, told by the OS (inotify and the like, via watchfiles).

A long-lived process (the Python API, the server) would otherwise stat every file of
the vault before each search to catch edits made by others: ~0.1 s at 10,000 notes,
seconds at 100,000. With a watcher it looks only at the files that changed.
"""

from __future__ import annotations

import threading
from pathlib import Path

from .places import hidden


class VaultWatcher:
    def __init__(self, root: Path):
        self.root = root
        self._prefix = str(root) + "/"
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._rescan = False  # a folder changed, or the watch broke: look at everything
        self._failed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="amem-watch", daemon=True)

    def start(self) -> "VaultWatcher | None":
        """Start watching; None when this system cannot watch (the caller then scans).
        The watch is in place when this returns, so no change after it is missed."""
        try:
            from watchfiles._rust_notify import RustNotify

            self._notify = RustNotify([str(self.root)], False, False, 300, True, True)
        except Exception:
            return None
        self._thread.start()
        return self

    def take(self) -> set[str] | None:
        """The vault-relative note paths changed since the last call; None when only a
        full scan can tell (a folder moved, or the OS stopped telling)."""
        with self._lock:
            if self._failed or self._rescan:
                self._rescan = False
                self._dirty.clear()
                return None
            dirty, self._dirty = self._dirty, set()
            return dirty

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                changes = self._notify.watch(200, 10, 1000, self._stop)
                if isinstance(changes, str):  # "timeout", "stop" or "signal"
                    continue
                with self._lock:
                    for _change, path in changes:
                        rel = path[len(self._prefix):]
                        if not path.startswith(self._prefix) or any(map(hidden, rel.split("/"))):
                            continue  # .amem/ itself, editors' hidden swap files
                        if rel.endswith(".md"):
                            self._dirty.add(rel)
                        elif "." not in rel.rsplit("/", 1)[-1]:
                            self._rescan = True  # a folder came or went: its notes with it
        except Exception:
            with self._lock:
                self._failed = True  # the OS stopped telling: the caller falls back to scans
        finally:
            self._notify.close()
