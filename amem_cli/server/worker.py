"""What the long-lived servers (`amem serve`, `amem mcp`) share: one facade they take
turns on, its model called with the turn given up, and a thread that works the queue of
added notes in the background."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from ..config import Settings
from ..errors import AmemError, ConflictError
from ..operations import Facade
from ..wire.queue import Process

log = logging.getLogger("amem.worker")


class Turn:
    """One thread at a time uses the container (one SQLite connection, one Chroma
    view). The worker gives its turn up while the model generates, so a search never
    waits for an LLM call; a long import gives it up between batches."""

    def __init__(self):
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._waiting = 0
        self._count_lock = threading.Lock()
        self._taken = 0  # how many times a thread has taken the turn (changed by the holder only)

    @contextmanager
    def held(self):
        """The turn, for this thread."""
        with self._counting():
            self._lock.acquire()
        self._owner = threading.get_ident()
        self._taken += 1
        try:
            yield
        finally:
            self._owner = None
            self._lock.release()

    @contextmanager
    def paused(self):
        me = threading.get_ident()
        if self._owner != me:
            yield
            return
        self._owner = None
        self._lock.release()
        try:
            yield
        finally:
            with self._counting():
                self._lock.acquire()
            self._owner = me

    def breathe(self, wait: float = 1.0) -> None:
        """Let a thread waiting for the turn have it, then take it back. (A lock let go
        and taken at once would usually go back to its holder.)"""
        if self._owner != threading.get_ident() or not self._waiting:
            return
        taken = self._taken
        with self.paused():
            deadline = time.monotonic() + wait
            # Until another thread has taken the turn: one that takes it and gives it
            # back between two looks would otherwise go unseen, and this wait last its
            # whole second (an import waited so at every batch the queue worker looked in).
            while self._taken == taken and time.monotonic() < deadline:
                time.sleep(0.001)

    @contextmanager
    def _counting(self):
        with self._count_lock:
            self._waiting += 1
        try:
            yield
        finally:
            with self._count_lock:
                self._waiting -= 1


def serving(settings: Settings, turn: Turn, *, create: bool = False,
            between_batches: Callable[[], None] | None = None) -> Facade:
    """The facade of a long-lived server: it hears from the OS which files others change,
    its model is called with the turn given up (`PausingLLM`), and a worker in the same
    process (`QueueWorker`) works its queue."""
    return Facade(settings, create=create, watch=True, has_worker=True, between_batches=between_batches,
                  wrap_llm=lambda llm, vault: PausingLLM(llm, turn, vault))


class PausingLLM:
    """A server's model, called with the turn given up (unless the vault's write lock is
    held: another thread could not write anyway, and would wait for us)."""

    def __init__(self, llm, turn: Turn, vault):
        self._llm, self._turn, self._vault = llm, turn, vault

    @property
    def identity(self) -> str:
        return self._llm.identity

    def complete_json(self, messages, schema, *, max_tokens):
        if self._vault.lock().held():
            return self._llm.complete_json(messages, schema, max_tokens=max_tokens)
        with self._turn.paused():
            return self._llm.complete_json(messages, schema, max_tokens=max_tokens)

    def __getattr__(self, name):
        return getattr(self._llm, name)


class QueueWorker:
    """Does the queued model work of added notes, one note per turn, until stopped."""

    def __init__(self, facade: Facade, turn: Turn):
        self.facade, self.turn = facade, turn
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="amem-worker", daemon=True)

    def start(self, warm_up: bool = False) -> None:
        """`warm_up`: load the embedder and the vector store first, in this thread."""
        self._warm_up = warm_up
        self.wake.set()  # jobs left queued by an earlier run
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=30)  # the note in hand is finished; the rest stay queued

    def _run(self) -> None:
        try:
            if self._warm_up:
                with self.turn.held():  # load the embedder and the vector store before the first call needs them
                    self.facade.warm_up()
        except Exception:  # the first call that needs them will say what is wrong
            log.exception("warming up failed")
        ok = True
        while not self.stopping.is_set():
            # Every 5 s for jobs queued by other processes; after a failure (a model that
            # will not load), not before the next add.
            self.wake.wait(timeout=5 if ok else None)
            self.wake.clear()
            ok = self._work()

    def _work(self) -> bool:
        """Work the queue until it is empty (True) or a job fails (False: it stays queued).
        A job a person's saves put off stays queued too, for the next round (True)."""
        while not self.stopping.is_set():
            try:
                with self.turn.held():
                    if not self.facade.run(Process(limit=1)).processed:
                        return True
            except ConflictError as exc:  # a person keeps saving the note: the job is tried again in a while
                log.warning("queued work put off: %s", exc.message)
                return True
            except AmemError as exc:
                log.error("queued work failed: %s%s", exc.message, f" ({exc.hint})" if exc.hint else "")
                return False
            except Exception:
                log.exception("queued work failed")
                return False
        return True
