"""Several `amem` processes writing one vault at once: nothing lost, nothing corrupted."""

from __future__ import annotations

import json
import subprocess

PROCESSES = 4
NOTES_EACH = 5
TIMEOUT = 600  # generous: 2 CPUs, each process imports chromadb


def _writer_script(amem_cmd: list[str], vault, p: int) -> list[str]:
    """One process adding its notes one `amem add` at a time (a shell loop, as a user would)."""
    calls = " && ".join(
        " ".join(_quote(a) for a in [*amem_cmd, "--dir", str(vault), "--embedder", "fake", "add",
                                     f"note P{p}-I{i} unique token zq{p}x{i}w about process {p} item {i}"])
        for i in range(NOTES_EACH)
    )
    return ["sh", "-c", calls]


def _quote(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def test_parallel_adds(vault, amem_cmd, run_amem):
    run_amem("--dir", vault, "--embedder", "fake", "init", check=True)
    procs = [
        subprocess.Popen(_writer_script(amem_cmd, vault, p), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for p in range(PROCESSES)
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=TIMEOUT)
        outputs.append((proc.returncode, out, err))
    for rc, out, err in outputs:
        assert rc == 0, f"exit {rc}\nstdout:\n{out}\nstderr:\n{err}"
        assert "Traceback" not in err and "Warning" not in err, err
    printed = [line for _, out, _ in outputs for line in out.split()]
    assert len(printed) == len(set(printed)) == PROCESSES * NOTES_EACH

    files = sorted(p.stem for p in vault.glob("*.md"))
    assert files == sorted(printed)

    res = run_amem("--dir", vault, "--embedder", "fake", "list", "--json", "--limit", "100", check=True)
    listed = json.loads(res.stdout)
    assert len(listed) == PROCESSES * NOTES_EACH
    assert {n["id"] for n in listed} == set(printed)

    st = json.loads(run_amem("--dir", vault, "--embedder", "fake", "status", "--json", check=True).stdout)
    assert st["notes"] == st["indexed"] == st["embedded"] == PROCESSES * NOTES_EACH
    assert st["pending_changes"] == 0 and st["errors"] == []

    # Every note is found by its own unique words, in full text and by vectors.
    by_content = {n["content"]: n["id"] for n in listed}
    for p in range(PROCESSES):
        for i in range(NOTES_EACH):
            content = f"note P{p}-I{i} unique token zq{p}x{i}w about process {p} item {i}"
            assert content in by_content
    # (In-process CliRunner from here on: the writers are done, and 20 cold starts would be slow.)
    from typer.testing import CliRunner

    from amem_cli.cli.app import app

    runner = CliRunner()
    for p in range(PROCESSES):
        for i in range(NOTES_EACH):
            res = runner.invoke(app, ["--dir", str(vault), "--embedder", "fake", "search", f"zq{p}x{i}w",
                                      "--mode", "keyword", "--json", "--limit", "3"])
            assert res.exit_code == 0, res.output
            hits = json.loads(res.stdout)
            assert hits and hits[0]["content"].startswith(f"note P{p}-I{i} "), hits
    # The vector store took every note (the writers were serialised by the vault's lock).
    from amem_cli import AgentMemory

    with AgentMemory(vault, embedder="fake") as mem:
        assert mem._c.vectors.count() == PROCESSES * NOTES_EACH
        res = mem.search("zq2x3w", mode="semantic", top_k=1)
        assert res[0].note.content.startswith("note P2-I3 ")
