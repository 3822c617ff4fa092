"""The queue of the model's work: working it, listing it, cancelling it."""

from . import Request
from ..records import Record


class ProcessResult(Record):
    processed: list[str]  # the notes whose queued work was done, in order
    queued: int  # jobs left


class Job(Record):
    id: str  # the note's
    state: str  # queued, running or failed
    queued: str  # when
    failures: int
    error: str | None
    content: str | None  # the note's first words


class QueueSummary(Record):
    """The queue in numbers: jobs waiting, running, failed (and waiting to be tried
    again), the seconds a job takes at the rate measured and all of them would take."""

    queued: int
    running: int
    failed: int
    seconds_per_job: float | None
    seconds_left: float | None


class QueueResult(Record):
    jobs: list[Job]  # in the order they are worked
    summary: QueueSummary


class CancelResult(Record):
    cancelled: list[str]
    running: list[str]  # held by a worker, left to it
    not_queued: list[str]

class Process(Request, op="process", result=ProcessResult, starts_server=True, redo=True):
    """Work the queue: at most `limit` jobs, none started after `seconds`."""

    limit: int | None = None
    seconds: float | None = None


class Queue(Request, op="queue", result=QueueResult, redo=True):
    limit: int | None = None


class CancelQueued(Request, op="queue_cancel", result=CancelResult, redo=True):
    ids: list[str] | None = None  # None: all
