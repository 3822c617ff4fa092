"""The queue of deferred pipeline work, shared by every worker of a vault (the warm
server's, the MCP server's, `amem process`): a worker claims a job for a lease before
doing it, so no job is done twice, and a job whose worker died goes to the next one."""

from __future__ import annotations

import os
import socket
import threading
import time

from ..index.sqlite import SqliteIndex
from ..wire.queue import QueueSummary

# The metadata key a deferred note's file carries until its work is done: the queue
# lives in the index, which is derived, so the files must say which work is owed.
QUEUED = "amem_queued"

# Long enough for one note's model work on a slow machine. A holder on this host that
# is no longer running loses its jobs at once; the lease is for the rest.
LEASE_SECONDS = 600.0

# The rate of the queue is measured over this many of the last jobs done: enough to even
# out a long note, few enough to follow a change of model.
RATE_JOBS = 20


def holder_id() -> str:
    """Who claims: this host, process and thread (threads of one server share a pid)."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def holder_gone(holder: str) -> bool:
    """Whether a holder on this host is no longer running (a killed worker)."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    try:  # killed but not yet reaped by its parent: as good as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


class JobQueue:
    def __init__(self, index: SqliteIndex):
        self.index = index

    def expired(self) -> list[tuple[str, str]]:
        """(note id, holder) of the claims whose lease ran out or whose holder died."""
        now = time.time()
        return [(n, h) for n, h, until in self.index.jobs.claims() if (until or 0) < now or holder_gone(h)]

    def claim(self, note_id: str | None = None) -> str | None:
        """The next job for this thread (`note_id`: that note's), or None when none is free."""
        with self.index.transaction():
            for expired_id, holder in self.expired():
                self.index.jobs.release(expired_id, holder)
            return self.index.jobs.claim(holder_id(), time.time(), LEASE_SECONDS, note_id)

    def release(self, note_id: str, error: str | None = None) -> None:
        """Give a job back undone: the next worker tries again. `error`: it failed (counted:
        it goes behind the jobs that have not); None: it was interrupted."""
        with self.index.transaction():
            if error is None:
                self.index.jobs.release(note_id, holder_id())
            else:
                self.index.jobs.fail(note_id, holder_id(), error)

    def finish(self, note_id: str, seconds: float | None = None) -> None:
        """The job is done (`seconds`: the time its model work took; None: no model worked)."""
        with self.index.transaction():
            self.index.jobs.finish(note_id, seconds, time.time())

    def summary(self) -> QueueSummary:
        """The queue in numbers: jobs waiting, running, failed (and waiting to be tried
        again), the seconds a job takes at the rate measured (the mean of the last jobs)
        and the seconds all of them would take one after another."""
        total, claimed, failed = self.index.jobs.counts()
        running = claimed - len(self.expired()) if claimed else 0
        times = self.index.jobs.seconds()[-RATE_JOBS:]
        per_job = sum(times) / len(times) if times else None
        return QueueSummary(queued=total - running, running=running, failed=failed,
                            seconds_per_job=None if per_job is None else round(per_job, 2),
                            seconds_left=None if per_job is None else round(per_job * total))
