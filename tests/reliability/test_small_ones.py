"""The smaller findings of round 3, each as bae2764 got it wrong."""

from __future__ import annotations

import json
import os
import signal
import subprocess

from conftest import served, wait_until


def test_process_until_a_400_digit_number_is_a_clean_error(run):
    res = run("process", "--until", "9" * 400 + "h")
    assert res.exit_code == 2, res.output  # on bae2764: 70, OverflowError
    lines = res.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Error: --until") and len(lines[0]) < 200, res.stderr
    res = run("process", "--until", "9" * 400 + "h", "--json")
    assert res.exit_code == 2 and set(json.loads(res.stdout)) == {"error", "hint"}


def test_cancelling_work_that_is_not_queued_exits_alike_with_and_without_json(run):
    note = run("add", "a note with nothing queued").stdout.strip()
    human = run("queue", "cancel", note)
    machine = run("queue", "cancel", note, "--json")
    assert human.exit_code == machine.exit_code == 2  # on bae2764: 2 and 0
    reply = json.loads(machine.stdout)
    assert reply["not_queued"] == [note] and reply["error"] and reply["hint"]


def test_option_errors_with_json_are_json(run):
    for args in (["list", "--limit", "-1", "--json"], ["search", "--json"], ["list", "--json", "--nonsense"],
                 ["show", "--json"], ["queue", "--limit", "0", "--json"], ["graph", "--format", "png", "--json"]):
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        reply = json.loads(res.stdout)  # on bae2764: Typer's usage text on stderr, nothing on stdout
        assert set(reply) == {"error", "hint"} and reply["error"], args
    assert run("list", "--limit", "-1").stderr.startswith("Usage:")  # without --json: as Typer says it


def test_a_pgp_key_block_given_as_text_is_text(run, run_amem, vault):
    block = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGaZ3kQBCADxjYgX1pH5nD3cS7kU2bNwE0vWq8aTm\n-----END PGP PRIVATE KEY BLOCK-----"
    for res in (run("add", block, "--json"), run("add", "---", "--tag", "rule")):
        assert res.exit_code == 0, res.output  # on bae2764: 2, "No such option"
    stored = json.loads(run("list", "--json").stdout)
    assert sorted(n["content"] for n in stored) == ["---", "[REDACTED:private_key]"]
    # The same through the fast reader of everyday commands, in a process of its own.
    res = run_amem("--dir", vault, "--embedder", "fake", "add", "----- a line of dashes, then words")
    assert res.returncode == 0, res.stderr
    assert run("add", "--tga", "x").exit_code == 2  # a mistyped option is still an error


def test_a_killed_servers_work_done_here_is_said(run_amem, amem_cmd, vault, tmp_path):
    amem = served(run_amem, vault, {"AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"})
    run = next(amem)
    try:
        assert run("add", "a note to start the server").returncode == 0
        pid = json.loads((vault / ".amem" / "server.json").read_text())["pid"]
        lines = [json.dumps({"content": f"line {i} about the tides"}) for i in range(400)]
        (tmp_path / "big.jsonl").write_text("\n".join(lines) + "\n")
        env = {**os.environ, "AMEM_SERVER": "auto", "AMEM_EMBEDDER": "fake"}
        importing = subprocess.Popen([*amem_cmd, "--dir", str(vault), "import",
                                      str(tmp_path / "big.jsonl"), "--batch", "25", "--yes"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert wait_until(lambda: _imported(vault) > 0, timeout=60)
        os.kill(pid, signal.SIGKILL)
        out, err = importing.communicate(timeout=300)
        (vault / ".amem" / "server.json").unlink(missing_ok=True)  # the killed server's, left behind
        assert importing.returncode == 0, err
        assert "server stopped" in err and "in this process" in err  # on bae2764: nothing said
    finally:
        next(amem, None)


def _imported(vault) -> int:
    return sum(1 for _ in vault.glob("*.md")) - 1
