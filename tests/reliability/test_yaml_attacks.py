"""YAML attacks in a note's frontmatter: Python tags that would run code, and alias
bombs that expand a few lines into gigabytes. Each is refused with its line in under a
second and under 100 MB of extra memory, and nothing runs."""

from __future__ import annotations

import json
import resource
import time
import tracemalloc
from pathlib import Path

import pytest

from amem_cli.errors import NoteFormatError
from amem_cli.markdown import parse_note

MAX_SECONDS = 1.0
MAX_EXTRA_BYTES = 100 * 1024 * 1024


def _python_tags(marker: Path) -> dict[str, str]:
    """Payloads that, loaded by an unsafe loader, would create `marker`."""
    touch = f"touch {marker}"
    code = f"open({str(marker)!r}, 'w').write('pwned')"
    return {
        "apply-system": f"x: !!python/object/apply:os.system [{touch!r}]",
        "apply-exec": f"x: !!python/object/apply:builtins.exec [{code!r}]",
        "apply-eval-in-tags": f"tags: [!!python/object/apply:builtins.eval [{code!r}]]",
        "apply-subprocess": f"x: !!python/object/apply:subprocess.check_output [[touch, {str(marker)!r}]]",
        "new-popen": f"x: !!python/object/new:subprocess.Popen [[touch, {str(marker)!r}]]",
        "name": "x: !!python/name:os.system",
        "module": "x: !!python/module:os",
        "object": "x: !!python/object:os._wrap_close {}",
        "tuple": "x: !!python/tuple [1, 2]",
        "long-tag": f"x: !<tag:yaml.org,2002:python/object/apply:os.system> [{touch!r}]",
        "local-tag": f"x: !evil [{touch!r}]",
        "in-metadata": f"metadata: {{k: !!python/object/apply:os.system [{touch!r}]}}",
    }


def _laughs(levels: int, width: int, *, key: str = "x", flow_map: bool = False) -> str:
    """The classic: each level holds `width` aliases of the one before (width**levels values)."""
    lines = ['l0: &l0 "lol"']
    for i in range(1, levels):
        items = ", ".join([f"*l{i - 1}"] * width)
        value = "{" + ", ".join(f"k{j}: *l{i - 1}" for j in range(width)) + "}" if flow_map else f"[{items}]"
        lines.append(f"l{i}: &l{i} {value}")
    lines.append(f"{key}: *l{levels - 1}")
    return "\n".join(lines)


BOMBS = {
    "billion-laughs": _laughs(10, 9),
    "billion-laughs-maps": _laughs(10, 9, flow_map=True),
    "laughs-in-tags": _laughs(9, 9, key="tags"),
    "laughs-in-context": _laughs(9, 9, key="context"),
    "laughs-in-metadata": _laughs(9, 9, key="metadata"),
    "wide-and-flat": "a: &a [" + ", ".join(["x"] * 1000) + "]\nb: [" + ", ".join(["*a"] * 1000) + "]",
    # One long string aliased many times: few values, but gigabytes as JSON in the index.
    "long-string": 'a: &a "' + "x" * 1_000_000 + '"\nb: [' + ", ".join(["*a"] * 500) + "]",
    "recursive": "a: &a [1, *a]",
    "recursive-map": "a: &a {self: *a}",
}


def _note(frontmatter: str) -> str:
    return f"---\nid: attack\n{frontmatter}\n---\nBody.\n"


def _refused_quickly(text: str) -> NoteFormatError:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(NoteFormatError) as caught:
            parse_note(text, path="attack.md")
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < MAX_SECONDS, f"took {elapsed:.2f} s"
    assert peak < MAX_EXTRA_BYTES, f"peak {peak / 1e6:.0f} MB"
    return caught.value


@pytest.mark.parametrize("name", list(_python_tags(Path("m"))))
def test_python_tags_are_refused_and_run_nothing(name, tmp_path):
    marker = tmp_path / "pwned"
    err = _refused_quickly(_note(_python_tags(marker)[name]))
    assert err.line == 3 and "attack.md:3:" in err.message
    assert not marker.exists()


@pytest.mark.parametrize("name", list(BOMBS))
def test_alias_bombs_are_refused_in_bounded_time_and_memory(name):
    err = _refused_quickly(_note(BOMBS[name]))
    assert err.line and err.line >= 2
    assert "aliases are expanded" in err.message or "contains it" in err.message


def test_the_vault_reports_every_attack_and_indexes_the_rest(vault, run, tmp_path):
    """All of them at once in a vault: one reindex reports each, runs nothing, keeps the
    files, and grows the process's peak memory by less than the same bound."""
    marker = tmp_path / "pwned"
    attacks = {**{f"tag-{k}": v for k, v in _python_tags(marker).items()}, **{f"bomb-{k}": v for k, v in BOMBS.items()}}
    for name, fm in attacks.items():
        (vault / f"{name}.md").write_text(_note(fm).replace("id: attack", f"id: {name}"), encoding="utf-8")
    (vault / "fine.md").write_text("---\nid: fine\n---\nA harmless note about laughter.\n", encoding="utf-8")
    before = {p.name: p.read_bytes() for p in vault.glob("*.md")}

    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    res = run("reindex", "--json")
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) * 1024
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert sorted(e.split(":")[0] for e in report["errors"]) == sorted(f"{n}.md" for n in attacks)
    assert report["notes"] == 1
    assert grown < MAX_EXTRA_BYTES, f"the process's peak grew by {grown / 1e6:.0f} MB"
    assert not marker.exists()
    assert {p.name: p.read_bytes() for p in vault.glob("*.md")} == before
    hits = json.loads(run("search", "laughter", "--mode", "keyword", "--json").stdout)
    assert [h["id"] for h in hits] == ["fine"]
