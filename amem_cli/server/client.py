"""The CLI's side of the warm server: find it, start it, hand it an operation.

Light to import (no models, no services): a command the server answers costs little
more than starting Python and parsing its options.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..global_options import MODEL_OPTIONS, SETTINGS
from ..places import INDEX_DIR, private_dir
from ..wire import PROTOCOL, Request

if TYPE_CHECKING:
    from .protocol import Reply

START_TIMEOUT = 60.0  # seconds a starting server may take before the CLI works alone
CONNECT_PATIENCE = 10.0  # seconds a client waits for room in a busy server's queue of connections


class NoReply(ConnectionError):
    """The server took the request but stopped before it answered."""


def socket_path(index_dir: Path) -> Path:
    """`.amem/server.sock`, or (a Unix socket path has ~100 bytes at most) a private
    runtime folder named after the vault. OSError when that folder is not private: in a
    shared /tmp someone else could have made it, and put their own socket in it."""
    path = index_dir / "server.sock"
    if len(os.fsencode(path)) < 100:
        return path
    import hashlib  # (here: most sockets are in .amem, and each import costs a command ~4 ms)

    base = private_dir(Path(os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/amem-{os.getuid()}"))
    return base / (hashlib.sha1(os.fsencode(index_dir)).hexdigest()[:16] + ".sock")


def call(index_dir: Path, message: dict, timeout: float | None = None,
         on_event: Callable[[dict], None] | None = None) -> dict:
    """One request, its events (each to `on_event`), its reply. Raises OSError when no
    server listens, NoReply when one took the request and stopped before it answered."""
    path = socket_path(index_dir)
    if not stat.S_ISSOCK(os.lstat(path).st_mode):  # a symlink (a vault may carry one) could lead to anyone's socket
        raise ConnectionRefusedError(f"{path} is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        _connect(sock, str(path))
        sock.sendall(json.dumps(message).encode() + b"\n")
        sock.shutdown(socket.SHUT_WR)
        try:
            with sock.makefile("rb") as lines:
                for line in lines:
                    reply = json.loads(line)
                    if not (isinstance(reply, dict) and "event" in reply):
                        return reply
                    if on_event is not None:
                        on_event(reply)
        except (OSError, ValueError) as exc:
            raise NoReply(str(exc) or "no reply") from None
    raise NoReply("no reply")


def _connect(sock: socket.socket, path: str) -> None:
    """Connect, trying again for a while when the server's queue of connections is full
    (EAGAIN: a burst of commands at once), rather than take a busy server for none."""
    deadline = time.monotonic() + CONNECT_PATIENCE
    while True:
        try:
            sock.connect(path)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def settings_for(flags: dict[str, Any], environ: dict[str, str] | None = None, dir: str | None = None,
                 notices: list[str] | None = None):
    """The settings a command with these global options (`global_options.SETTINGS`, as the
    root command names them) runs with; see `load_settings`."""
    from ..config import load_settings

    given = {name: flags.get(name) for name in SETTINGS}
    if dir:
        given["dir"] = dir
    return load_settings(environ, notices=notices, **given)


def settings_key(settings) -> str:
    """Two processes with equal keys would do the same work the same way."""
    from dataclasses import replace

    return repr(replace(settings, dir=Path(settings.dir).expanduser().resolve()))


def vault_dir(flags: dict[str, str]) -> Path:
    given = flags.get("dir") or os.environ.get("AMEM_DIR")
    if given:
        return Path(given).expanduser().absolute()
    return Path(settings_for(flags).dir).expanduser().absolute()  # the user config's, or the platform's folder


def start(settings, flags: dict[str, str]) -> bool:
    """Start the server for this vault in the background (it outlives this command),
    with the command's own global options but those that choose the model (the
    command's own: `global_options.MODEL_OPTIONS`), so that it works with the same
    settings. False when the vault's checks fail: the command then runs here and says why."""
    from ..errors import AmemError
    from ..vault import Vault

    try:
        Vault(settings.dir).ensure()  # what the server does first: a refusal here, not a minute's wait for it
        log = os.open(Path(settings.dir) / INDEX_DIR / "server.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except (AmemError, OSError):
        return False
    options = [part for name, value in flags.items() if name not in ("dir", *MODEL_OPTIONS)
               for part in ("--" + name.replace("_", "-"), value)]
    cmd = [sys.executable, "-m", "amem_cli", *options, "--dir", str(Path(settings.dir).expanduser().absolute()), "serve"]
    import subprocess

    try:
        subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, close_fds=True)
    finally:
        os.close(log)
    return True


def wait_until_up(index_dir: Path, timeout: float) -> bool:
    start = time.monotonic()
    told = False
    while time.monotonic() - start < timeout:
        try:
            if call(index_dir, {"op": "ping"}, timeout=2).get("ok"):
                return True
        except (OSError, ValueError):
            pass
        if not told and time.monotonic() - start > 2:
            # The very first start also prepares the embedding model (~15 s, once).
            print("amem: starting this vault's background server (`amem server logs` shows what it does)...",
                  file=sys.stderr, flush=True)
            told = True
        time.sleep(0.05)
    return False


def ask(request: Request, flags: dict[str, str],
        progress: Callable[[int, int | None], None] | None = None) -> Reply | None:
    """Do the operation of `request` in this vault's warm server, starting one for the
    operations worth it (`Request.starts_server`), and return its reply (a result or an
    error, and warnings); None when it should be done in this process (no server wanted
    or possible, or one with other settings). `flags`: the command's global options that
    are settings, those given."""
    from ..errors import AmemError
    from ..records import Misfit
    from .protocol import Reply, request_line, unreadable

    if not request.served or os.environ.get("AMEM_SERVER") == "off" or os.environ.get("AMEM_DEBUG"):
        return None  # (AMEM_DEBUG: a traceback is wanted, and only this process can print it here)
    try:
        root = vault_dir(flags)
    except Exception:
        return None  # the in-process run reports bad settings properly
    index_dir = root / INDEX_DIR
    try:
        if not stat.S_ISDIR(os.lstat(index_dir).st_mode):  # not through a link: this process's vault check refuses one
            return None
    except OSError:
        return None
    if not os.access(index_dir, os.W_OK):
        return None  # a vault amem may only read: work alone
    try:
        socket_path(index_dir)
    except OSError:
        return None  # nowhere private for the socket: work alone
    # The server works out this command's settings from what this process sees.
    envelope = request_line(request, flags, {k: v for k, v in os.environ.items() if k.startswith("AMEM_")}, str(root))

    def on_event(event: dict) -> None:
        if progress is not None and event.get("event") == "progress":
            progress(event.get("done"), event.get("total"))

    started = False
    while True:
        try:
            reply = call(index_dir, envelope, on_event=on_event)
        except NoReply:
            if request.redo:
                print(f"amem: the server stopped before it answered; doing `{request.op}` again in this process",
                      file=sys.stderr, flush=True)
                return None
            raise AmemError(f"the server stopped before it answered, so `{request.op}` may or may not have been done",
                            hint="look before you run it again (`amem server logs` says why it stopped)") from None
        except (OSError, ValueError):
            if started or not request.starts_server:
                return None
            try:
                settings = settings_for(flags, dir=str(root))
            except Exception:
                return None
            if settings.server == "off":
                return None
            try:
                if not start(settings, flags):
                    return None
            except OSError:  # no process to spare: work alone
                return None
            started = True
            if not wait_until_up(index_dir, START_TIMEOUT):
                return None
            continue
        # A server of another version of the wire (an older amem's names none), or one
        # whose own settings changed since it started (a config edit): stop it; the next
        # command that needs a server starts a fresh one. What it did not do is done here.
        # (One that cannot honour this command's settings answers "here": it serves on.)
        if reply.get("protocol") != PROTOCOL or reply.get("retry") == "settings":
            try:
                call(index_dir, {"op": "stop"}, timeout=5)
            except (OSError, ValueError):
                pass
            if "result" not in reply:
                return None
        if "retry" in reply:
            return None
        try:
            return Reply.from_json({**reply, "protocol": PROTOCOL})
        except Misfit:
            raise unreadable(reply) from None
