"""The queue shared by every worker of a vault: two processes working it at once do
every job exactly once, and a killed worker's job goes to the next one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from amem_cli import AgentMemory
from amem_cli.llm.fake import ScriptedLLM, schema_example
from amem_cli.services.jobs import JobQueue
from conftest import internals, queued

JOBS = 40


def with_a_model(vault) -> AgentMemory:
    """A memory whose writes queue the model's work (with no model there is none to queue)."""
    return AgentMemory(vault, embedder="fake", llm=ScriptedLLM(default=schema_example))


@pytest.fixture
def memory(vault):
    with with_a_model(vault) as mem:
        yield mem

# A processor that waits at a barrier (so both work the queue at the same moment), then
# works it through the same service `amem process` calls, and prints what it did.
PROCESSOR = textwrap.dedent(
    """
    import json, os, sys, time
    from amem_cli import AgentMemory
    vault, ready, go = sys.argv[1:4]
    with AgentMemory(vault, embedder="fake", llm="fake") as mem:
        open(ready, "w").close()
        while not os.path.exists(go):
            time.sleep(0.01)
        print(json.dumps(mem.process()))
    """
)


def test_two_processes_do_every_job_exactly_once(vault, tmp_path):
    with with_a_model(vault) as mem:
        ids = [n.id for n in mem.add_many([{"content": f"note {i} about glacier number {i}"} for i in range(JOBS)], defer=True)]
    go = tmp_path / "go"
    procs, readies = [], []
    for n in range(2):
        ready = tmp_path / f"ready{n}"
        readies.append(ready)
        procs.append(subprocess.Popen([sys.executable, "-c", PROCESSOR, str(vault), str(ready), str(go)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in readies):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    go.touch()
    done = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        done.append(json.loads(out))
    first, second = done
    assert not set(first) & set(second), "a job was done by both processes"
    assert sorted(first + second) == sorted(ids) and len(first + second) == JOBS
    assert first and second, done  # both took part (else this test proved nothing)
    with AgentMemory(vault, embedder="fake", llm="none") as mem:
        assert queued(mem) == []
        assert all("amem_queued" not in mem.get(i).metadata for i in ids)
        assert mem.doctor().ok


# Claims one job and keeps it until killed.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from amem_cli.index.sqlite import SqliteIndex
    from amem_cli.retrieve.fields import SearchFields
    from amem_cli.services.jobs import JobQueue
    print(JobQueue(SqliteIndex(__import__("pathlib").Path(sys.argv[1]), SearchFields())).claim(), flush=True)
    time.sleep(600)
    """
)


def test_a_killed_workers_job_goes_to_the_next(vault):
    with with_a_model(vault) as mem:
        a, b = (n.id for n in mem.add_many([{"content": "first"}, {"content": "second"}], defer=True))
        index = internals(mem).index
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(vault / ".amem" / "index.db")],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == a
            queue = JobQueue(index)
            assert queue.expired() == []  # a live holder keeps its job
            assert queue.claim() == b
            queue.release(b)
        finally:
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait()
        assert [n for n, _ in JobQueue(index).expired()] == [a]
        assert mem.process() == [a, b]
        assert index.jobs.queued() == []


def test_an_expired_lease_is_taken_over(memory):
    a = memory.add("first", defer=True).id
    index = internals(memory).index
    with index.transaction():  # held by a live worker elsewhere whose lease ran out
        index.db.execute("UPDATE jobs SET claimed_by = 'other-host:1:1', lease_until = ?", [time.time() - 1])
    assert [n for n, _ in JobQueue(index).expired()] == [a]
    assert memory.process() == [a]


def test_a_failed_job_is_given_back(memory, monkeypatch):
    a = memory.add("first", defer=True).id
    pipeline = internals(memory).notes.pipeline

    def broken(note):
        raise RuntimeError("model crashed")

    monkeypatch.setattr(pipeline, "_complete", broken)
    with pytest.raises(RuntimeError):
        memory.process()
    assert internals(memory).index.jobs.claims() == [] and queued(memory) == [a]
