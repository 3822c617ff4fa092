"""What the long-lived servers (`amem serve`, `amem mcp`) share: taking turns on one
container, and a thread that works the queue of added notes in the background."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

from ..container import Container
from ..errors import AmemError

log = logging.getLogger("amem.worker")


class Turn:
    """One thread at a time uses the container (one SQLite connection, one Chroma
    view). The worker gives its turn up while the model generates, so a search never
    waits for an LLM call."""

    def __init__(self):
        self._lock = threading.Lock()
        self._owner: int | None = None

    @contextmanager
    def held(self):
        self._lock.acquire()
        self._owner = threading.get_ident()
        try:
            yield
        finally:
            self._owner = None
            self._lock.release()

    @contextmanager
    def paused(self):
        if self._owner != threading.get_ident():
            yield
            return
        self._owner = None
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._owner = threading.get_ident()


class PausingLLM:
    """The container's LLM, called with the turn given up (unless the vault's write lock
    is held: another thread could not write anyway, and would wait for us)."""

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

    def __init__(self, c: Container, turn: Turn):
        self.c, self.turn = c, turn
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
                    self.c.embedder.embed(["warm up"])
                    self.c.indexer.vectors().count()
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
        """Work the queue until it is empty (True) or a job fails (False: it stays queued)."""
        while not self.stopping.is_set():
            try:
                with self.turn.held():
                    self.c.indexer.flush_vectors()
                    if not self.c.notes.pipeline.process(limit=1):
                        return True
            except AmemError as exc:
                log.error("queued work failed: %s%s", exc.message, f" ({exc.hint})" if exc.hint else "")
                return False
            except Exception:
                log.exception("queued work failed")
                return False
        return True
