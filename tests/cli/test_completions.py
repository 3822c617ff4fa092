"""Shell completion: the committed scripts are current, and a TAB is answered from the
index file in this process, quickly (no model library imported, no server asked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_cli.cli.app import app
from amem_cli.cli.completions import SCRIPTS, write_scripts
from amem_cli.markdown import render_note
from amem_cli.models import Note
from amem_cli.server import client
from conftest import AMEM_MAIN, read_only_view

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "chromadb", "onnxruntime", "llama_cpp", "sqlite_utils")

# Answer one completion request as the `amem` script does, then report the heavy
# modules loaded on stderr (stdout holds the completions).
PROBE = f"""
import json, sys
from amem_cli.cli.entry import main
sys.argv = ["amem"]
try:
    main()
except SystemExit:
    pass
print("HEAVY=" + json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)
"""


def test_committed_scripts_are_current(tmp_path):
    for path in write_scripts(tmp_path):
        committed = REPO / "completions" / path.name
        assert committed.is_file() and committed.read_text() == path.read_text(), (
            f"{committed} is stale: run `make completions`")
    assert sorted(p.name for p in (REPO / "completions").iterdir()) == sorted(SCRIPTS.values())


@pytest.fixture
def indexed(vault):
    """Three notes, indexed."""
    for nid, tag, box in (("alpha-1", "work", "office"), ("alpha-2", "walk", "outdoors"), ("beta-1", "home", "house")):
        (vault / f"{nid}.md").write_text(render_note(Note(nid, f"Note {nid}", tags=[tag], boxes=[box])), encoding="utf-8")
    res = CliRunner().invoke(app, ["--dir", str(vault), "--embedder", "fake", "list"])
    assert res.exit_code == 0, res.output
    return vault


def complete(words: str, env: dict | None = None) -> tuple[list[str], list[str]]:
    """What bash would be offered for the last of `words` (an empty last word: after a
    space), and the heavy modules the answer imported."""
    parts = words.split(" ")
    env = {**{k: v for k, v in os.environ.items() if k != "AMEM_SERVER"}, **(env or {})}  # as a shell would run it
    env.update(COMP_WORDS=words, COMP_CWORD=str(len(parts) - 1), _AMEM_COMPLETE="complete_bash")
    res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    heavy = [line for line in res.stderr.splitlines() if line.startswith("HEAVY=")]
    assert res.returncode == 0 and heavy, res.stderr
    return res.stdout.split(), json.loads(heavy[-1][len("HEAVY="):])


def test_ids_tags_and_boxes_complete_from_the_index(indexed):
    d = f"amem --dir {indexed}"
    offered, heavy = complete(f"{d} show alpha")
    assert offered == ["alpha-1", "alpha-2"]
    assert heavy == []
    assert complete(f"{d} graph --around b")[0] == ["beta-1"]
    assert complete(f"{d} list --tag w")[0] == ["walk", "work"]
    assert complete(f"{d} search x --box ")[0] == ["house", "office", "outdoors"]
    assert complete(f"{d} graph --format d")[0] == ["dot"]
    assert complete(f"{d} gr")[0] == ["graph"]


def test_no_index_offers_no_names_and_the_rest_still_completes(indexed, tmp_path):
    """A vault without an index (yet) offers no ids, tags or boxes, and prints nothing
    else (no traceback in the shell); commands still complete, and the vault beside it
    that has an index offers its own."""
    nowhere = tmp_path / "nowhere"
    assert complete(f"amem --dir {nowhere} show ")[0] == []
    assert complete(f"amem --dir {nowhere} list --tag ")[0] == []
    assert complete(f"amem --dir {nowhere} sh")[0] == ["show"]
    assert complete(f"amem --dir {indexed} show ")[0] == ["alpha-1", "alpha-2", "beta-1"]


def test_a_read_only_vault_completes_from_its_index_in_the_cache(vault, tmp_path):
    """A vault amem may only read has its index in the user's cache, not in `.amem/`:
    a TAB finds it there, as the command does."""
    (vault / "gamma-1.md").write_text(render_note(Note("gamma-1", "Note gamma")), encoding="utf-8")
    env = {"AMEM_CACHE_DIR": str(tmp_path / "cache")}
    with read_only_view(vault, tmp_path / "view") as view:
        res = CliRunner().invoke(app, ["--dir", str(view), "--embedder", "fake", "list"], env=env)
        assert res.exit_code == 0 and "gamma-1" in res.stdout, res.output
        assert not (view / ".amem").exists()
        assert complete(f"amem --dir {view} show g", env=env)[0] == ["gamma-1"]


def test_bash_script_end_to_end(indexed, tmp_path):
    """The committed bash script, sourced in bash, with `amem` on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "amem").write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{AMEM_MAIN}" "$@"\n')
    (bin_dir / "amem").chmod(0o755)
    script = (
        f"source {REPO / 'completions' / 'amem.bash'}\n"
        f"COMP_WORDS=(amem --dir {indexed} rm alpha-); COMP_CWORD=4\n"
        '_amem_completion amem\nprintf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert res.stdout.split() == ["alpha-1", "alpha-2"], res.stderr


def test_a_completion_request_never_goes_to_the_server(indexed, monkeypatch, capsys):
    from amem_cli.cli.entry import main

    def refuse(*args, **kwargs):
        raise AssertionError("a TAB reached the server")

    monkeypatch.setenv("AMEM_SERVER", "auto")
    for name in ("ask", "call", "start"):
        monkeypatch.setattr(client, name, refuse)
    words = f"amem --dir {indexed} search x --box o"
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(len(words.split(" ")) - 1))
    monkeypatch.setenv("_AMEM_COMPLETE", "complete_bash")
    monkeypatch.setattr(sys, "argv", ["amem"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 0
    assert capsys.readouterr().out.split() == ["office", "outdoors"]  # answered here, from the index


@pytest.mark.parametrize("words, offered", [
    ("search x --mode ", ["hybrid", "semantic", "keyword", "graph"]),
    ("search x --mode s", ["semantic"]),
    ("graph --format ", ["mermaid", "dot", "graphml", "json"]),
    ("init --profile ", ["personal", "team", "research", "agent"]),
    ("init --profile r", ["research"]),
    ("--embedder ", ["onnx", "sentence-transformers", "fake"]),
    ("--llm ", ["llama", "openai", "none"]),
    ("--llm o", ["openai"]),
    ("config ", ["show"]),
])
def test_every_option_of_fixed_values_completes_them(tmp_path, words, offered):
    """Each option (or argument) that takes one of a fixed set of values offers them,
    without loading the heavy libraries (the sets live in light modules)."""
    got, heavy = complete(f"amem --dir {tmp_path} {words}")
    assert got == offered
    assert heavy == []
