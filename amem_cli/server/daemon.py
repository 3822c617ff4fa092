"""The warm server: one per vault, holding the embedder, the LLM and the stores loaded.

The CLI hands it whole commands (argv, and stdin when the command reads it); it runs
them with the same Typer app, against one long-lived container, and sends back what
they printed and their exit code. `amem add` through it only writes the note and
queues the rest; a worker thread then builds, links, evolves and embeds, in queue
order, from the jobs table, so a killed server loses nothing acknowledged.
"""

from __future__ import annotations

import io
import json
import os
import socket
import socketserver
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone

from ..config import Settings
from ..container import Container
from ..errors import AmemError, VaultError
from .client import LOCAL_ONLY, settings_for, settings_key, socket_path, split_argv
from .worker import PausingLLM, QueueWorker, Turn

# A request is one line of JSON. Longer ones are refused (the CLI then works alone); a
# client that sends nothing for this long is dropped, so a hung client holds no thread.
MAX_REQUEST = 64 * 2**20
READ_TIMEOUT = 60.0
STOP_GRACE = 120.0  # seconds a stopping server waits for the commands it is running


class NeedStdin(BaseException):
    """The command reads stdin the client has not sent yet (passes through `except Exception`)."""


class _ThreadStream(io.TextIOBase):
    """sys.stdout or sys.stderr in the server: a request's thread writes into its own
    buffer; every other thread (the worker) into the log."""

    def __init__(self, log):
        self._log = log
        self._local = threading.local()

    @contextmanager
    def bound(self, buffer: io.StringIO, tty: bool):
        self._local.buffer, self._local.tty = buffer, tty
        try:
            yield
        finally:
            self._local.buffer, self._local.tty = None, False

    def _target(self):
        return getattr(self._local, "buffer", None) or self._log

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return getattr(self._local, "tty", False)


class _ThreadStdin(_ThreadStream):
    """sys.stdin in the server: what the client sent, or NeedStdin if it sent none."""

    def __init__(self):
        super().__init__(None)

    def read(self, size: int = -1) -> str:
        buffer = getattr(self._local, "buffer", None)
        if buffer is None:
            raise NeedStdin
        return buffer.read(size)

    def readline(self, size: int = -1) -> str:
        buffer = getattr(self._local, "buffer", None)
        if buffer is None:
            raise NeedStdin
        return buffer.readline(size)

    def __iter__(self):
        return iter(self.readline, "")


class Server:
    def __init__(self, settings: Settings, idle_timeout: float | None = None):
        self.settings = settings
        self.key = settings_key(settings)
        self.idle_timeout = settings.server_idle if idle_timeout is None else idle_timeout
        self.container = Container(settings)
        self.index_dir = self.container.vault.index_dir
        self.socket = socket_path(self.index_dir)
        self.turn = Turn()
        self.worker = QueueWorker(self.container, self.turn)
        self.container.between_batches = self._between_batches
        self.stopping = threading.Event()
        self.last_request = time.monotonic()
        self.started = datetime.now(timezone.utc)
        self.requests = 0
        self._commands = threading.Condition()
        self._running = 0  # commands in hand: a busy server is not idle, and stops after them
        self._stdout = _ThreadStream(sys.stderr)
        self._stderr = _ThreadStream(sys.stderr)
        self._stdin = _ThreadStdin()
        self._command = None

    # -- life ---------------------------------------------------------------
    def run(self) -> None:
        """Serve until stopped or idle; the caller's process is the server."""
        if not self._only_server():
            raise VaultError("another amem server is serving this vault", hint="`amem server status` shows it")
        folder = os.stat(self.index_dir)
        self._folder = (folder.st_dev, folder.st_ino)
        sys.stdout, sys.stderr, sys.stdin = self._stdout, self._stderr, self._stdin
        c = self.container
        c.indexer.watch()
        with self.turn.held():
            c.indexer.sync()
            c.embedder.embed(["warm up"])  # load the model before the first request
            c.indexer.vectors().count()  # and the vector store's client, which writes need
            warm = getattr(c.llm, "warm", None)
            if warm is not None:
                try:
                    warm()  # never while a command's output is being captured (see LlamaCppLLM.warm)
                except Exception as exc:  # a bad model file: the worker reports it per job
                    print(f"model not loaded: {exc}", file=sys.__stderr__, flush=True)
        if c.llm is not None:  # None: no model
            c.llm = PausingLLM(c.llm, self.turn, c.vault)
        server = self._listen()
        self.worker.start()
        idle = threading.Thread(target=self._watch_idle, daemon=True, name="amem-idle")
        idle.start()
        self._write_info()
        print(f"{self.started.isoformat()} amem server for {c.vault.root} on {self.socket} (pid {os.getpid()})", file=sys.__stderr__, flush=True)
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            self.stopping.set()
            server.server_close()
            self._wait_for_commands()
            self.worker.stop()  # the note in hand is finished; the rest stay queued
            idle.join(timeout=5)
            self._remove_files()
            c.close()
            print(f"{datetime.now(timezone.utc).isoformat()} amem server stopped", file=sys.__stderr__, flush=True)

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
                    reply = server_self.handle(request)
                except Exception as exc:  # a malformed request gets an error, never a crash
                    reply = {"error": f"{exc.__class__.__name__}: {exc}"}
                try:
                    self.wfile.write(json.dumps(reply).encode() + b"\n")
                except OSError:
                    pass  # the client hung up: nobody to tell

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
    def handle(self, request: dict) -> dict:
        op = request.get("op")
        self.last_request = time.monotonic()
        if op == "ping":
            return {"ok": True}
        if op == "status":
            return self.status()
        if op == "stop":
            self.stop()
            return {"ok": True}
        if op == "run":
            argv = request.get("argv")
            if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
                return {"error": "argv must be a list of strings"}
            if split_argv(argv)[1] in LOCAL_ONLY:  # `serve`, `mcp`, `edit` here would take the server over
                return {"error": f"{split_argv(argv)[1]!r} runs only in the command's own process"}
            notices: list[str] = []  # told to this client, as its own process would (not to the log)
            settings = settings_for(split_argv(request["argv"])[0], dict(request.get("env") or {}), dir=request.get("dir"),
                                    notices=notices)
            if settings.server == "off":
                return {"retry": "off"}
            if settings_key(settings) != self.key:
                return {"retry": "settings"}
            if self._vault_gone():  # its socket may outlive it, in the runtime folder
                self.stop()
            with self._commands:
                if self.stopping.is_set():
                    return {"retry": "stopping"}  # the client does it in its own process
                self._running += 1
            try:
                return self._run(request, notices)
            finally:
                self.last_request = time.monotonic()
                with self._commands:
                    self._running -= 1
                    self._commands.notify_all()
                self.worker.wake.set()
        return {"error": f"unknown request {op!r}"}

    def _run(self, request: dict, notices: list[str]) -> dict:
        from ..cli import app as cli
        from ..cli import output

        if self._command is None:  # Typer builds the click command on every call: once is enough
            import typer.main

            self._command = typer.main.get_command(cli.app)

        argv = request["argv"]
        out, err = io.StringIO(), io.StringIO()
        stdin = request.get("stdin")
        def take_over() -> None:
            # One command at a time has the process: the consoles take the client's width,
            # and the working folder is the client's (its relative paths). Again each time
            # the command gets its turn back from another (see `Turn.paused`).
            output.console.width = output.err_console.width = int(request.get("width") or 80)
            os.chdir(request.get("cwd") or "/")
            cli.serving(self.container, notices)

        with self.turn.held(resume=take_over):
            self.requests += 1
            code = 0
            try:
                take_over()
                with self._stdout.bound(out, bool(request.get("stdout_tty"))), self._stderr.bound(err, False), \
                        self._stdin.bound(None if stdin is None else io.StringIO(stdin), bool(request.get("stdin_tty"))):
                    self._command.main(args=argv, prog_name="amem", standalone_mode=True)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except NeedStdin:
                return {"retry": "stdin"}
            finally:
                cli.serving(None)
        return {"stdout": out.getvalue(), "stderr": err.getvalue(), "code": code}

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
            "pid": os.getpid(), "vault": str(self.container.vault.root), "socket": str(self.socket),
            "started": self.started.isoformat(), "requests": self.requests, "queued": self._queued(),
            "idle_timeout": self.idle_timeout, "rss_mb": round(_rss_bytes() / 2**20, 1),
        }

    # -- background ---------------------------------------------------------
    def _queued(self) -> int:
        with self.turn.held():
            return len(self.container.index.queued(None))

    def _watch_idle(self) -> None:
        while not self.stopping.wait(1.0):
            if self._vault_gone():
                print(f"{datetime.now(timezone.utc).isoformat()} {self.index_dir} was removed: stopping",
                      file=sys.__stderr__, flush=True)
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
