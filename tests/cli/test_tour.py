"""The README's tour runs as written: its lines, read from the README's own text, run one
after another in bash in a fresh vault, with the real `amem` console script of this
environment. The fake embedder and no model stand in for the slow parts (AMEM_EMBEDDER,
AMEM_LLM); everything else is what a newcomer runs."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tour_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme[readme.index("## A short tour"):]
    block = re.search(r"```bash\n(.*?)```", tour, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def tour_script(lines: list[str]) -> str:
    """One bash script: each line announced on stderr (so a failure names it), `<id>` the id
    the tour's first `amem add` printed."""
    script = ["set -euo pipefail"]
    first_add = next(i for i, line in enumerate(lines) if line.startswith("amem add "))
    for number, line in enumerate(lines):
        script.append(f"echo {shlex.quote('tour line: ' + line)} >&2")
        if number == first_add:
            script.append(f"ID=$({line})")
            script.append('echo "$ID"')
        else:
            script.append(line.replace("<id>", '"$ID"'))
    return "\n".join(script) + "\n"


def test_the_tour_names_only_files_that_ship():
    for line in tour_lines():
        for name in re.findall(r"\b(notes/\S+)", line):
            assert (ROOT / name).is_file(), f"the tour names {name}, which is not in the repository"


@pytest.mark.skipif(shutil.which("bash") is None, reason="the tour is bash")
def test_every_line_of_the_tour_runs_in_a_fresh_vault(tmp_path):
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "activate").is_file() or not (bin_dir / "amem").is_file():
        pytest.skip("not run from a virtual environment with amem installed (make test runs it so)")
    clone = tmp_path / "clone"  # what the tour sees from the repository's folder
    clone.mkdir()
    shutil.copytree(ROOT / "notes", clone / "notes")
    (clone / ".venv").symlink_to(bin_dir.parent)
    home = tmp_path / "home"
    home.mkdir()
    # The warm server on, as a newcomer has it: commands after the first are quick.
    env = {**os.environ, "HOME": str(home), "AMEM_EMBEDDER": "fake", "AMEM_LLM": "none", "AMEM_SERVER": "auto"}
    env.pop("AMEM_DIR", None)
    vault = home / "memory"
    try:
        res = subprocess.run(["bash", "-c", tour_script(tour_lines())], cwd=clone, env=env,
                             capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run([bin_dir / "amem", "--dir", vault, "server", "stop"], env=env, capture_output=True, timeout=60)
    last = [line for line in res.stderr.splitlines() if line.startswith("tour line: ")][-1:]
    assert res.returncode == 0, f"{last} failed (exit {res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    assert last == ["tour line: " + tour_lines()[-1]]  # it ran to the end

    assert len(list(vault.glob("*.md"))) == 2 + 1 + 3 + 4 + 2 - 1  # added, replied, imported, ingested, added (--ttl, --llm none); one removed
    assert "Alice prefers tea over coffee" in res.stdout  # the search found it
    assert (clone / "graph.html").is_file()
