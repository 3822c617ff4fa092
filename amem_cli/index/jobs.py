"""The queue of deferred pipeline work, as stored: jobs, who holds which, and how long
the last ones took (`services.jobs.JobQueue` works it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .connection import Connection

JOB_TIMES = 100  # how many jobs' times are kept


class JobStore:
    def __init__(self, conn: Connection):
        self.db = conn.db

    def enqueue(self, note_ids: list[str], when: str) -> None:
        self.db.conn.executemany("INSERT OR IGNORE INTO jobs(note_id, queued) VALUES (?, ?)", [(i, when) for i in note_ids])

    def queued(self, limit: int | None = None) -> list[str]:
        sql = "SELECT note_id FROM jobs ORDER BY seq" + (" LIMIT ?" if limit else "")
        return [r[0] for r in self.db.execute(sql, [limit] if limit else [])]

    def claim(self, holder: str, now: float, lease: float, note_id: str | None = None) -> str | None:
        """Give the oldest job nobody holds (or whose lease ran out) to `holder`, in one
        statement, so two workers never get the same job; jobs that failed go after
        those that did not. `note_id`: that note's job only."""
        which = "note_id = ? AND " if note_id is not None else ""
        rows = self.db.execute(
            "UPDATE jobs SET claimed_by = ?, lease_until = ? WHERE seq = (SELECT seq FROM jobs "
            f"WHERE {which}(claimed_by IS NULL OR lease_until < ?) ORDER BY failures, seq LIMIT 1) RETURNING note_id",
            [holder, now + lease, *([note_id] if note_id is not None else []), now],
        ).fetchall()
        return rows[0][0] if rows else None

    def claims(self) -> list[tuple[str, str, float]]:
        """(note id, holder, lease end) of every job a worker holds."""
        return [tuple(r) for r in self.db.execute(
            "SELECT note_id, claimed_by, lease_until FROM jobs WHERE claimed_by IS NOT NULL ORDER BY seq")]

    def release(self, note_id: str, holder: str) -> None:
        self.db.execute("UPDATE jobs SET claimed_by = NULL, lease_until = NULL WHERE note_id = ? AND claimed_by = ?",
                        [note_id, holder])

    def fail(self, note_id: str, holder: str, error: str) -> None:
        """Give a job back undone, counting the failure and keeping its error."""
        self.db.execute("UPDATE jobs SET claimed_by = NULL, lease_until = NULL, failures = failures + 1, error = ? "
                        "WHERE note_id = ? AND claimed_by = ?", [error, note_id, holder])

    def drop(self, note_id: str) -> None:
        """The note's job leaves the queue, undone (its note went, or its work is done otherwise)."""
        self.db.execute("DELETE FROM jobs WHERE note_id = ?", [note_id])

    def finish(self, note_id: str, seconds: float | None, now: float) -> None:
        """The job is done and leaves the queue; `seconds`: how long its model work took
        (kept for the last JOB_TIMES jobs, to estimate the time the queue has left)."""
        self.drop(note_id)
        if seconds is not None:
            self.db.execute("INSERT INTO job_times(finished, seconds) VALUES (?, ?)", [now, seconds])
            self.db.execute("DELETE FROM job_times WHERE seq <= (SELECT max(seq) FROM job_times) - ?", [JOB_TIMES])

    def seconds(self) -> list[float]:
        """How long the last jobs took, oldest first."""
        return [r[0] for r in self.db.execute("SELECT seconds FROM job_times ORDER BY seq")]

    def listing(self, limit: int | None = None) -> list[dict]:
        """The queue in the order its jobs are claimed, each with the first words of its note."""
        sql = ("SELECT j.note_id, j.queued, j.claimed_by, j.lease_until, j.failures, j.error, substr(n.content, 1, 200) "
               "FROM jobs j LEFT JOIN notes n ON n.id = j.note_id ORDER BY j.failures, j.seq" + (" LIMIT ?" if limit else ""))
        keys = ("note_id", "queued", "claimed_by", "lease_until", "failures", "error", "content")
        return [dict(zip(keys, r)) for r in self.db.execute(sql, [limit] if limit else [])]

    def counts(self) -> tuple[int, int, int]:
        """(jobs, jobs claimed, jobs that failed and are not claimed)."""
        row = self.db.execute("SELECT count(*), count(claimed_by), coalesce(sum(failures > 0 AND claimed_by IS NULL), 0) "
                              "FROM jobs").fetchone()
        return tuple(row)

    def duplicates(self) -> list[tuple[str, int]]:
        """(note id, how many times) of each note queued more than once (never, normally)."""
        return [tuple(r) for r in self.db.execute("SELECT note_id, count(*) FROM jobs GROUP BY note_id HAVING count(*) > 1")]


def job_total(path: Path) -> int | None:
    """How many jobs the queue of the index at `path` holds, read on a connection of its
    own: a server answers `amem server status` without waiting for its turn on the index.
    None when it cannot be read so."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            return conn.execute("SELECT count(*) FROM jobs").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return None
