"""The everyday commands read without Typer (`cli/quick.py`) are the commands Typer
reads: the same options, the same call, the same output; what the quick reader is not
sure of goes to Typer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from amem_cli.cli import quick
from amem_cli.cli.app import app
from amem_cli.cli.session import Session
from amem_cli.records import decode

ROOT = typer.main.get_command(app)


def _kind(param) -> str:
    if getattr(param, "is_flag", False):
        return quick.FLAG
    if param.multiple:
        return quick.TEXTS
    return quick.INT if param.type.name.startswith("int") else quick.TEXT


def _options(params) -> set[tuple]:
    return {(p.name, tuple(p.opts), _kind(p), p.default, getattr(p.type, "min", None))
            for p in params if p.param_type_name == "option" and not p.secondary_opts}


def _spec_options(options) -> set[tuple]:
    return {(o.param, o.names, o.kind, o.default, o.min) for o in options}


@pytest.mark.parametrize("name", sorted(quick.COMMANDS))
def test_the_table_is_the_typer_declaration(name):
    command, spec = ROOT, quick.COMMANDS[name]
    for word in name.split():  # `server status`: a command of a group
        command = command.commands[word]
    assert _spec_options(spec.options) == _options(command.params)
    assert spec.arguments == tuple((p.name, p.required) for p in command.params if p.param_type_name == "argument")
    assert not any(p.secondary_opts or p.envvar or p.nargs != 1 for p in command.params)  # what the reader cannot read


def test_the_global_options_are_the_root_commands():
    declared = _options(p for p in ROOT.params if p.name != "version")  # --version: left to Typer
    assert _spec_options(quick.GLOBAL) == declared


def note(**fields) -> dict:
    """A note's JSON (`amem_cli.wire.notes.NoteResult`)."""
    return {"id": "n1", "content": "Alice likes tea", "keywords": [], "tags": [], "context": "", "created_at": None,
            "updated_at": None, "links": [], "backlinks": [], "previous": None, "next": None, "supersedes": [],
            "superseded_by": [], "expires": None, "boxes": [], "metadata": {}, **fields}


# What each operation answers, as the server's reply carries it.
RESULTS = {
    "search": [note(created_at="2024-05-08T13:56:00+00:00", score=0.5, content="Alice likes [bold] tea", context="A drink.",
                    sources={"semantic": {"rank": 1, "score": 0.5}})],
    "block": {"query": "what now", "context": "Memory:\n- Alice likes tea", "tokens": 7, "notes": ["n1"]},
    "add": note(id="n2", content="x", queued=1),
    "show": note(keywords=["tea"], boxes=["drinks"], links=["n3"], metadata={"k": "v"}, related={"n3": "Bob likes coffee"}),
    "list": [note(created_at="2024-05-08T13:56:00+00:00", tags=["drink"])],
}

SAME = [
    ["search", "coffee"],
    ["search", "coffee", "-n", "3", "--tag", "a", "-t", "b", "--json"],
    ["search", "--mode=keyword", "tea time", "--since", "2024-01-01", "--until=2025", "--explain"],
    ["search", "-n5", "-bbox", "q", "--limit", "7"],
    ["--dir", "/somewhere", "--llm", "none", "--embedder", "fake", "--no-server", "search", "q", "--box", "x"],
    ["-d", "/v", "--model", "/m.gguf", "--llm-url", "http://h/v1", "search", "--", "-q"],
    ["context", "what now", "--max-tokens", "50", "-t", "x"],
    ["-d", "/nowhere/vault", "server", "status"],  # asks the socket, not an operation: no server there
    ["-d", "/nowhere/vault", "server", "status", "--json"],
    ["context", "what now", "--json"],
    ["add", "some text", "-k", "a", "--keyword", "b", "--meta", "k=v", "--defer", "--no-redact", "--created", "2024-01-02"],
    ["add", "--context", "C.", "-b", "inbox", "--after", "n1", "--json", "--", "-dash text"],
    ["add", "x", "--meta", "novalue"],  # a usage error, the same from both
    ["show", "n1"],
    ["show", "n1", "--json"],
    ["list"],
    ["list", "--limit", "2", "--tag=", "--json"],
]


@pytest.fixture
def calls(monkeypatch):
    """Each operation called (global options, request); it answers from RESULTS."""
    seen: list[tuple] = []

    def call(self, request, progress=None):
        seen.append((self.flags, request))
        return decode(request.result, RESULTS[request.op])

    monkeypatch.setattr(Session, "call", call)
    return seen


@pytest.mark.parametrize("argv", SAME, ids=" ".join)
def test_both_readers_make_the_same_call_and_print_the_same(argv, calls, capsys):
    code = quick.main(argv)
    assert code is not None, "the quick reader gave this command line to Typer"
    quick_out = capsys.readouterr()
    typer_res = CliRunner().invoke(app, argv)
    assert len(calls) in (0, 2) and calls[:1] == calls[1:]  # (none: an error before the call)
    assert (code, quick_out.out, quick_out.err) == (typer_res.exit_code, typer_res.stdout, typer_res.stderr)
    assert code in (0, 2) and "internal error" not in quick_out.err, quick_out.err  # a result printed, or a usage error


@pytest.mark.parametrize("argv", [
    [], ["search"], ["search", "q", "--nope"], ["search", "q", "-n", "0"], ["search", "q", "-n", "x"], ["search", "q", "-n"],
    ["search", "a", "b"], ["search", "q", "--json=1"], ["context", "q", "--max-tokens", "0"], ["show"],
    ["--help"], ["-h"], ["search", "--help"], ["--version"], ["--bad", "search", "q"], ["stats"], ["searc", "q"],
    ["search", "-5"], ["list", "extra"], ["server"], ["server", "stop"], ["server", "status", "x"],
], ids=" ".join)
def test_what_it_is_not_sure_of_goes_to_typer(argv, calls):
    with pytest.raises(quick.Unsure):
        quick.parse(argv)
    assert quick.main(argv) is None
    assert calls == []


def test_the_console_script_reads_search_without_typer(tmp_path):
    """The point of it: a warm search costs no Typer (~60 ms a command)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    probe = ("import sys; from amem_cli.cli.entry import main\n"
             "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
             "print('TYPER=' + str('typer' in sys.modules)); sys.exit(code)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEM_")}
    env.update(AMEM_CONFIG=str(tmp_path / "config.toml"), AMEM_SERVER="off")
    for argv, loaded in ((["list"], "False"), (["stats"], "True")):
        res = subprocess.run([sys.executable, "-c", probe, "--dir", str(vault), "--embedder", "fake", "--llm", "none", *argv],
                             capture_output=True, text=True, timeout=120, env=env)
        assert res.stdout.strip().rsplit("\n", 1)[-1] == f"TYPER={loaded}", (argv, res.stdout, res.stderr)
        assert res.returncode == 0, res.stderr


def test_the_json_error_is_the_same_from_both(calls, capsys):
    argv = ["add", "x", "--meta", "bad", "--json"]
    assert quick.main(argv) == 2
    out = capsys.readouterr().out
    assert json.loads(out)["error"].startswith("--meta wants key=value")
    assert CliRunner().invoke(app, argv).stdout == out


def test_a_reader_that_went_away_is_no_error(tmp_path):
    """`amem list | head -1`: the pipe closes under amem; it stops quietly (exit 1, as
    click does), not with an internal error."""
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEM_")}
    env.update(AMEM_CONFIG=str(tmp_path / "config.toml"), AMEM_SERVER="off")
    base = [sys.executable, "-m", "amem_cli", "--dir", str(vault), "--embedder", "fake", "--llm", "none"]
    for i in range(3):
        subprocess.run([*base, "add", f"note {i}"], check=True, capture_output=True, env=env, timeout=120)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        res = subprocess.run([*base, "list"], stdout=write_end, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    finally:
        os.close(write_end)
    assert (res.returncode, res.stderr) == (1, "")
