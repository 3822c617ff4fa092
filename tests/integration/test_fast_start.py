"""Rule 6: the everyday commands start fast because heavy libraries stay unimported.

Each command runs in a fresh interpreter (an in-process CliRunner would see whatever
earlier tests imported), then the child reports which heavy modules ended up loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

AMEM_MAIN = "import sys; from amem_cli.cli.entry import main; sys.argv[0] = 'amem'; main()"
HEAVY = ("torch", "sentence_transformers", "chromadb", "llama_cpp", "transformers", "onnxruntime")

# Run the Typer app as the console script does, keep going after its SystemExit, then
# print the heavy modules found in sys.modules as the last line of stdout.
PROBE = f"""
import sys
from amem_cli.cli.entry import main
sys.argv = ["amem", *sys.argv[1:]]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
import json
print("HEAVY=" + json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
sys.exit(code)
"""


def probe(*args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    res = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    last = res.stdout.rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith("HEAVY="), f"no probe line in stdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    return res, json.loads(last[len("HEAVY="):])


def clean_env(config_dir) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEM_")}
    env["AMEM_CONFIG"] = str(config_dir / "config.toml")
    return env


@pytest.fixture(scope="module")
def shared_note(tmp_path_factory):
    """A vault with one note, written (and embedded) by the fake embedder: (vault, id).
    Module-scoped so the (chromadb-importing) add runs once; tests only read it."""
    base = tmp_path_factory.mktemp("fast_start")
    vault = base / "vault"
    vault.mkdir()
    res = subprocess.run(
        [sys.executable, "-c", AMEM_MAIN, "--dir", str(vault), "--embedder", "fake", "add",
         "The quick brown fox jumps over the lazy dog", "-t", "animals"],
        capture_output=True, text=True, timeout=120, env=clean_env(base),
    )
    assert res.returncode == 0, res.stderr
    return vault, res.stdout.strip()


@pytest.fixture
def one_note(vault, run_amem):
    """A vault of this test's own with one note (for tests that change files)."""
    res = run_amem("--dir", vault, "--embedder", "fake", "add", "The quick brown fox jumps over the lazy dog",
                   "-t", "animals", check=True)
    return res.stdout.strip()


def test_help_imports_nothing_heavy():
    res, heavy = probe("--help")
    assert res.returncode == 0, res.stderr
    assert "Usage" in res.stdout
    assert heavy == []


def test_help_does_not_even_import_rich():
    """Rich (~50 ms) and Typer's Rich help (~190 ms) would double `amem --help`'s time."""
    code = "import sys; from amem_cli.cli.entry import main; sys.argv = ['amem', '--help']\ntry: main()\nexcept SystemExit: pass\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'rich' or m == 'typer.rich_utils'))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().rsplit("\n", 1)[-1] == "[]"


def test_help_imports_no_wire_module():
    """A command imports its typed requests where it runs (`amem_cli/wire/`, ~8 ms with
    their records): `amem --help` needs none of them."""
    code = "import sys; from amem_cli.cli.entry import main; sys.argv = ['amem', '--help']\ntry: main()\nexcept SystemExit: pass\nprint(sorted(m for m in sys.modules if m.startswith(('amem_cli.wire', 'amem_cli.records'))))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().rsplit("\n", 1)[-1] == "[]"


def test_version_imports_nothing_heavy():
    res, heavy = probe("--version")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("amem ")
    assert heavy == []


def test_subcommand_help_imports_nothing_heavy():
    res, heavy = probe("search", "--help")
    assert res.returncode == 0, res.stderr
    assert heavy == []


# `list`, `show` and `status` run with the default (real) embedder setting: they must not
# need it. `search --mode keyword` is full text only, so it must not need vectors either.
@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["list", "--json"],
        ["show", "{id}"],
        ["show", "{id}", "--json"],
        ["status", "--json"],
        ["search", "fox", "--mode", "keyword", "--json"],
    ],
    ids=lambda c: " ".join(c),
)
def test_read_commands_import_nothing_heavy(shared_note, command):
    vault, one_note = shared_note
    args = [a.replace("{id}", one_note) for a in command]
    res, heavy = probe("--dir", str(vault), *args)
    assert res.returncode == 0, res.stderr
    assert (one_note if command[0] != "status" else '"notes": 1') in res.stdout
    assert heavy == [], f"`amem {' '.join(args)}` imported {heavy}"


def test_list_after_a_hand_edit_imports_nothing_heavy(vault, one_note):
    """The sync that picks up an edited file refreshes SQLite only; vectors wait for a search."""
    path = vault / f"{one_note}.md"
    path.write_text(path.read_text().replace("lazy dog", "sleepy cat"))
    (vault / "dropped.md").write_text("A note dropped into the folder by hand\n")
    res, heavy = probe("--dir", str(vault), "list", "--json")
    assert res.returncode == 0, res.stderr
    listed = {n["id"]: n["content"] for n in json.loads(res.stdout.rsplit("\nHEAVY=", 1)[0])}
    assert listed[one_note].endswith("sleepy cat") and "dropped" in listed
    assert heavy == []


def test_errors_import_nothing_heavy(tmp_path):
    res, heavy = probe("--dir", str(tmp_path / "missing"), "list")
    assert res.returncode == 4
    assert "does not exist" in res.stderr
    assert heavy == []
