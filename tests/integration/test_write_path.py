"""The write path never waits on the model: a 40-message session piped into `amem
ingest` through the warm server, with the bundled GGUF model configured (`--llm llama`),
returns in under 2 s with its notes searchable and the model's work queued. The
embedder is the fake one: the model is what this is about, and the rest stays light."""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import served, wait_until

pytestmark = pytest.mark.integration

ENV = {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake", "AMEM_LLM": "llama", "AMEM_MODEL_FIELDS": "keywords,tags"}  # model work to queue


def session_text(messages: int = 40) -> str:
    """A chat of `messages` turns, as an agent's end-of-session hook would pipe it in."""
    topics = ["the Postgres migration", "the deploy pipeline", "walrus colonies", "the tea budget", "glacier speed"]
    lines = []
    for i in range(messages):
        speaker = "user" if i % 2 == 0 else "assistant"
        lines.append(f"{speaker}: message {i} about {topics[i % len(topics)]}, which matters for the release on day {i}.")
    lines[7] = "assistant: the zeppelin hangar lease ends in March, so the airship moves to Friedrichshafen."
    return "\n\n".join(lines) + "\n"


@pytest.fixture
def amem(run_amem, vault):
    server = served(run_amem, vault, ENV)
    run = next(server)
    yield run
    run("queue", "cancel", "--all")  # the model's work would take minutes: dropped, not waited for
    next(server, None)  # stops the server


def test_ingest_through_the_warm_server_returns_before_the_model_works(amem, amem_cmd, vault):
    import subprocess

    amem("search", "warm up", check=True)  # starts the server, which loads the model
    assert json.loads(amem("server", "status", "--json", check=True).stdout)["running"]

    started = time.monotonic()
    res = subprocess.run([*amem_cmd, "--dir", str(vault), "ingest", "--json"], input=session_text(), text=True,
                         capture_output=True, env={**os.environ, **ENV}, timeout=120)
    took = time.monotonic() - started
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["ingested"] >= 20 and report["queued"] == report["ingested"]
    assert took < 2.0, f"ingest took {took:.2f} s"

    # Searchable at once, by words and by meaning, while the model works the queue.
    for mode in ("keyword", "semantic"):
        hits = json.loads(amem("search", "zeppelin hangar lease", "--mode", mode, "--json", check=True).stdout)
        assert "zeppelin" in hits[0]["content"], (mode, hits)
    queue = json.loads(amem("queue", "--json", check=True).stdout)
    assert len(queue["jobs"]) >= report["ingested"] - 2  # the worker may have one or two in hand or done
    assert {j["state"] for j in queue["jobs"]} <= {"queued", "running"}
    # The worker does the model's work: the first note gets the model's fields, and its time is measured.
    first = report["ids"][0]
    assert wait_until(lambda: first not in {j["id"] for j in json.loads(amem("queue", "--json").stdout)["jobs"]},
                      timeout=300)
    note = json.loads(amem("show", first, "--json", check=True).stdout)
    assert "amem_queued" not in note["metadata"] and note["keywords"]
    status = json.loads(amem("status", "--json", check=True).stdout)["queue"]
    assert status["seconds_per_job"] is not None and status["seconds_left"] is not None
