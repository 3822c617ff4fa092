"""The warm server: one per vault, holding the embedder, the LLM and the stores loaded.

It serves operations (`amem_cli.operations`) to the CLI over the protocol of
`protocol.py`, on one long-lived facade; the CLI renders their results. `amem add`
through it only writes the note and queues the rest; a worker thread then builds,
links, evolves and embeds, in queue order, from the jobs table, so a killed server
loses nothing acknowledged.
"""

from __future__ import annotations

import json
import os
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from ..config import MODEL_CHOICE, Settings
from ..errors import AmemError, UsageError, VaultError
from ..llm import no_model
from ..operations import Facade
from ..records import Misfit, decode, encode
from ..wire import PROTOCOL, Request, load_all
from ..wire.vault import Sync
from .client import settings_for, settings_key, socket_path
from .protocol import MAX_REQUEST, READ_TIMEOUT, Envelope, Reply, error_reply, progress_event
from .worker import QueueWorker, Turn, serving

STOP_GRACE = 120.0  # seconds a stopping server waits for the commands it is running


def read_request(op: Any, args: Any) -> Request:
    """The request a client sent as JSON, checked against its type (`amem_cli.wire`); a
    UsageError says what is wrong with it."""
    requests = load_all()
    kind = requests.get(op) if isinstance(op, str) else None
    if kind is None:
        raise UsageError(f"unknown operation {op!r}", hint=f"one of: {', '.join(sorted(requests))}")
    if not isinstance(args, dict):
        raise UsageError(f"the arguments of {op!r} are a JSON object, not {type(args).__name__}")
    hints = kind.hints()
    for key, value in args.items():
        if key not in hints:
            raise UsageError(f"{op!r} takes no argument {key!r}", hint=f"it takes: {', '.join(hints) or 'none'}")
        try:
            decode(hints[key], value)
        except Misfit:
            raise UsageError(f"{op!r}: {key!r} cannot be {value!r}") from None
    missing = [name for name in kind._fields if name not in kind._defaults and name not in args]
    if missing:
        raise UsageError(f"{op!r} needs {', '.join(map(repr, missing))}")
    return kind.from_json(args)


class Server:
    def __init__(self, settings: Settings, idle_timeout: float | None = None,
                 settings_now: Callable[[], Settings] | None = None):
        """`settings_now`: this server's settings as they would be loaded now (its flags
        and environment, the config files as they are now): it stops when they change."""
        self.settings = settings
        self.key = settings_key(settings)
        self._settings_now = settings_now or (lambda: settings)
        self.idle_timeout = settings.server_idle if idle_timeout is None else idle_timeout
        self.turn = Turn()
        self.stopping = threading.Event()
        self.facade = serving(settings, self.turn, between_batches=self._between_batches)
        self.index_dir = self.facade.index_dir
        self.socket = socket_path(self.index_dir)
        self.worker = QueueWorker(self.facade, self.turn)
        self.last_request = time.monotonic()
        self.started = datetime.now(timezone.utc)
        self.requests = 0
        self._commands = threading.Condition()
        self._running = 0  # commands in hand: a busy server is not idle, and stops after them

    # -- life ---------------------------------------------------------------
    def run(self) -> None:
        """Serve until stopped or idle; the caller's process is the server."""
        if not self._only_server():
            raise VaultError("another amem server is serving this vault", hint="`amem server status` shows it")
        folder = os.stat(self.index_dir)
        self._folder = (folder.st_dev, folder.st_ino)
        facade = self.facade
        with self.turn.held():
            facade.run(Sync())  # the first look at the files (what it finds is told to the first command)
            facade.warm_up(model=True)  # the embedder, the vector store's client and the model, before the first request
        server = self._listen()
        self.worker.start()
        idle = threading.Thread(target=self._watch_idle, daemon=True, name="amem-idle")
        idle.start()
        self._write_info()
        print(f"{self.started.isoformat()} amem server for {facade.root} on {self.socket} (pid {os.getpid()})", file=sys.stderr, flush=True)
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            self.stopping.set()
            server.server_close()
            self._wait_for_commands()
            self.worker.stop()  # the note in hand is finished; the rest stay queued
            idle.join(timeout=5)
            self._remove_files()
            facade.close()
            print(f"{datetime.now(timezone.utc).isoformat()} amem server stopped", file=sys.stderr, flush=True)

    def _only_server(self) -> bool:
        """Hold the vault's server lock for the life of this process (the OS lets go when
        it dies); False when another server holds it. Commands that find no server start
        one each: without this, eight at once left eight servers, seven of them unreachable."""
        import fcntl

        fd = os.open(self.index_dir / "server.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd  # kept open: closing it would let go of the lock
        return True

    def _vault_gone(self) -> bool:
        """Whether the folder this server's lock and index are in was removed (`rm -rf
        .amem`) or replaced: the next command then makes a new one, and a new server with
        a lock of its own; this one must not serve on, nor write beside it."""
        try:
            folder = os.stat(self.index_dir)
        except FileNotFoundError:
            return True
        return os.fstat(self._lock_fd).st_nlink == 0 or (folder.st_dev, folder.st_ino) != self._folder

    def _listen(self):
        server_self = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = READ_TIMEOUT

            def handle(self):
                try:
                    line = self.rfile.readline(MAX_REQUEST + 1)
                    if len(line) > MAX_REQUEST:
                        raise ValueError(f"request longer than {MAX_REQUEST} bytes")
                    request = json.loads(line or b"{}")
                    if not isinstance(request, dict):
                        raise ValueError("a request is a JSON object")
                    reply = server_self.handle(request, self.send)
                except Exception as exc:  # a malformed request gets an error, never a crash
                    reply = error_reply(UsageError(f"bad request: {exc.__class__.__name__}: {exc}"), server_self.index_dir, [])
                self.send(encode(reply))

            def send(self, message: dict) -> None:
                try:
                    self.wfile.write(json.dumps(message).encode() + b"\n")
                    self.wfile.flush()
                except OSError:
                    pass  # the client hung up: nobody to tell (what it asked for is still done)

        class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True
            # socketserver's default of 5 waiting connections turned a burst of commands
            # away (a client that finds the queue full reads "no server"); the OS caps it.
            request_queue_size = socket.SOMAXCONN

        try:
            self.socket.unlink()  # left by a killed server (the CLI found nobody listening)
        except FileNotFoundError:
            pass
        old = os.umask(0o077)  # owner-only from the start, not after a chmod
        try:
            server = UnixServer(str(self.socket), Handler)
        finally:
            os.umask(old)
        bound = os.stat(self.socket)
        self._socket_id = (bound.st_ino, bound.st_dev)
        self._server = server
        return server

    def stop(self) -> None:
        if not self.stopping.is_set():
            self.stopping.set()
            threading.Thread(target=self._server.shutdown, daemon=True).start()

    def _write_info(self) -> None:
        info = {"pid": os.getpid(), "socket": str(self.socket), "started": self.started.isoformat()}
        tmp = self.index_dir / "server.json.tmp"
        tmp.write_text(json.dumps(info))
        os.replace(tmp, self.index_dir / "server.json")

    def _remove_files(self) -> None:
        """The socket and server.json, if they are still this server's: a server whose
        `.amem/` was removed leaves a new server's files alone."""
        info = self.index_dir / "server.json"
        try:
            if json.loads(info.read_text()).get("pid") == os.getpid():
                info.unlink()
        except (OSError, ValueError):
            pass
        try:
            bound = os.stat(self.socket)
            if (bound.st_ino, bound.st_dev) == self._socket_id:
                self.socket.unlink()
        except OSError:
            pass

    # -- requests -----------------------------------------------------------
    def handle(self, request: dict, send) -> Reply | dict:
        """The reply to one request; `send` sends the events before it. ValueError for a
        request that is no `Envelope`."""
        op = request.get("op")
        self.last_request = time.monotonic()
        if op == "ping":
            return {"ok": True}
        if op == "status":
            return self.status()
        if op == "stop":
            self.stop()
            return {"ok": True}
        try:
            envelope = Envelope.from_json(request)
        except Misfit as exc:
            raise ValueError(f"the request's {exc}") from None
        envelope.settings.check()
        if envelope.protocol != PROTOCOL:
            return Reply(retry="settings")  # a client of another amem: it stops this server, and works alone
        notices: list[str] = []  # told to this client, as its own process would (not to the log)
        try:
            settings = settings_for(envelope.settings.flags, envelope.settings.env, dir=envelope.settings.dir,
                                    notices=notices)
        except AmemError:  # a bad setting: the client's own process says what is wrong, as without a server
            return Reply(retry="here")
        if settings.server == "off":
            return Reply(retry="off")
        facade = self.facade
        if settings_key(settings) != self.key:
            facade = self._for_command(settings)
            if isinstance(facade, Reply):
                return facade  # a retry
        if self._vault_gone():  # its socket may outlive it, in the runtime folder
            self.stop()
        with self._commands:
            if self.stopping.is_set():
                return Reply(retry="stopping")  # the client does it in its own process
            self._running += 1
        try:
            with self.turn.held():
                self.requests += 1
                try:
                    asked = read_request(envelope.op, envelope.args)
                    if not asked.served:
                        raise UsageError(f"{asked.op!r} is done in the command's own process, not by a server")
                    value = facade.run(asked, warnings=notices,
                                       progress=lambda done, total: send(progress_event(done, total)))
                    return Reply(result=encode(asked.answer(value)), warnings=facade.told(notices))
                except Exception as exc:  # the error boundary: one line, a hint, an exit code
                    return error_reply(exc, self.facade.root, facade.told(notices))
        finally:
            self.last_request = time.monotonic()
            with self._commands:
                self._running -= 1
                self._commands.notify_all()
            self.worker.wake.set()

    def _for_command(self, settings: Settings) -> Facade | Reply:
        """How to serve a command whose settings are not this server's: the facade for
        it, or the retry to reply. A command that asks for no model (`amem --llm none add`)
        is served here, without one. The client does the others in its own process: with
        another model (a job carries no model, so queued work would be done with this
        server's), or other settings this server cannot take for one command (embedder,
        stores, search); "settings" when this server's own settings changed since it
        started (a config file edited): it stops, and the next command starts a fresh one."""
        try:
            current = settings_key(self._settings_now())
        except AmemError:
            current = None
        if current != self.key:
            return Reply(retry="settings")
        same_model = replace(settings, **{name: getattr(self.settings, name) for name in MODEL_CHOICE})
        if settings_key(same_model) == self.key and no_model(settings.llm):
            return self.facade.variant(settings)
        return Reply(retry="here")

    def _between_batches(self) -> None:
        """Between an import's batches: let waiting commands in, and end the import if
        the server is stopping (what is stored stays; the same import again does the rest)."""
        if self.stopping.is_set():
            raise AmemError("the import stopped because the server was stopped",
                            hint="run the same import again: lines imported already are skipped")
        self.turn.breathe()

    def _wait_for_commands(self) -> None:
        with self._commands:
            self._commands.wait_for(lambda: not self._running, timeout=STOP_GRACE)

    def status(self) -> dict:
        return {
            "pid": os.getpid(), "vault": str(self.facade.root), "socket": str(self.socket),
            "started": self.started.isoformat(), "requests": self.requests, "queued": self._queued(),
            "idle_timeout": self.idle_timeout, "rss_mb": round(_rss_bytes() / 2**20, 1),
        }

    # -- background ---------------------------------------------------------
    def _queued(self) -> int:
        """The jobs queued, read without waiting for the turn (a job in hand holds it)."""
        count = self.facade.jobs_waiting()
        if count is None:  # (the index being replaced, say): read on the turn
            with self.turn.held():
                count = self.facade.jobs_waiting(apart=False)
        return count

    def _watch_idle(self) -> None:
        while not self.stopping.wait(1.0):
            if self._vault_gone():
                print(f"{datetime.now(timezone.utc).isoformat()} {self.index_dir} was removed: stopping",
                      file=sys.stderr, flush=True)
                self.stop()
                return
            busy = self._running or time.monotonic() - self.last_request <= self.idle_timeout
            if not busy and not self._queued():
                self.stop()


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
