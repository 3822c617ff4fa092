"""`amem graph` through Typer's CliRunner, and its HTML page in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from amem_cli.cli.app import app


@pytest.fixture
def run(graph_vault):
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, ["--dir", str(graph_vault), "--embedder", "fake", *map(str, args)])

    return invoke


def test_default_is_mermaid(run):
    res = run("graph")
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("graph LR\n")
    assert "  n_a --- n_b" in res.stdout and "  n_c -.-> n_d" in res.stdout


def test_json_and_formats(run):
    data = json.loads(run("graph", "--json").stdout)
    assert data == json.loads(run("graph", "--format", "json").stdout)
    assert {(e["source"], e["target"], e["kind"]) for e in data["edges"]} == {
        ("a", "b", "link"), ("b", "c", "link"), ("c", "d", "sequence")}
    assert run("graph", "-f", "dot").stdout.startswith("digraph amem {")
    assert "<graphml" in run("graph", "-f", "graphml").stdout


def test_around_and_filters(run):
    data = json.loads(run("graph", "--around", "a", "--depth", "1", "--json").stdout)
    assert {n["id"] for n in data["nodes"]} == {"a", "b"} and data["around"] == "a"
    data = json.loads(run("graph", "--tag", "x", "--box", "one", "--json").stdout)
    assert {n["id"] for n in data["nodes"]} == {"a", "e"}


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--around", "nope"], 3, "no note with the id nope"),
        (["--format", "svg"], 2, "unknown graph format 'svg'"),
        (["--html", "x.html", "--format", "dot"], 2, "--html writes a page"),
    ],
)
def test_errors_are_one_line(run, args, code, message):
    res = run("graph", *args)
    assert res.exit_code == code
    assert message in res.stderr and "Traceback" not in res.output
    assert res.stderr.splitlines()[0].startswith("Error:")


def test_errors_as_json(run):
    res = run("graph", "--around", "nope", "--json")
    assert res.exit_code == 3
    assert json.loads(res.stdout)["error"] == "no note with the id nope"
    res = run("graph", "--json", "--format", "dot")
    assert res.exit_code == 2
    assert json.loads(res.stdout)["error"] == "--json prints JSON, not dot"


def test_output_file(run, tmp_path):
    out = tmp_path / "g.dot"
    res = run("graph", "-f", "dot", "--output", out)
    assert res.exit_code == 0, res.output
    assert out.read_text().startswith("digraph amem {")
    assert res.stdout.strip() == f"Wrote {out}: 5 notes, 2 links, 1 sequence links."
    res = run("graph", "--output", out, "--json")
    assert json.loads(res.stdout) == {"file": str(out), "format": "mermaid", "notes": 5, "links": 2, "sequence_links": 1}
    res = run("graph", "--output", tmp_path / "missing" / "g.txt")
    assert res.exit_code == 2 and "cannot write" in res.stderr


# -- the page, in a real browser -------------------------------------------------------


def chromium() -> str:
    """The browser, or a skip; CI sets AMEM_REQUIRE_CHROMIUM=1, so there it must exist."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("AMEM_REQUIRE_CHROMIUM") == "1":
        pytest.fail("chromium is not installed, and AMEM_REQUIRE_CHROMIUM=1 says it must be (apt-get install chromium)")
    pytest.skip("chromium is not installed (apt-get install chromium); AMEM_REQUIRE_CHROMIUM=1 makes this a failure")


@pytest.mark.parametrize("args, nodes", [((), 5), (("--around", "d", "--depth", "1"), 2)])
def test_html_page_draws_every_node_offline(run, tmp_path, args, nodes):
    browser = chromium()
    page = tmp_path / "graph.html"
    res = run("graph", "--html", page, *args)
    assert res.exit_code == 0, res.output
    assert "http://" not in page.read_text() and "https://" not in page.read_text()
    shown = subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )
    # The page logs nothing: a console line is a script error or a blocked request.
    console = [line for line in shown.stderr.splitlines() if ":CONSOLE" in line]
    body = re.search(r"<body[^>]*>", shown.stdout)
    assert body, f"no page from chromium (exit {shown.returncode}):\n{shown.stderr[-2000:]}"
    assert 'data-status="ok"' in body.group(), (body.group(), console)
    assert f'data-nodes="{nodes}"' in body.group()
    assert "pwned" not in body.group() and "<i>" not in shown.stdout  # note text stayed text
    assert console == []


def test_status_stats_and_graph_count_the_same_links(run, tmp_path):
    """a and b link each other (one pair, written by both), b links c, c -> d is a sequence."""
    stats = json.loads(run("stats", "--json").stdout)  # indexes the files (status reads before it would)
    status = json.loads(run("status", "--json").stdout)
    status = status.get("status", status)
    graph = json.loads(run("graph", "--output", tmp_path / "g.mmd", "--json").stdout)
    for counts in (status, stats, graph):
        assert (counts["links"], counts["sequence_links"]) == (2, 1)
    said = run("status").stdout
    assert "links 2, sequence links 1" in said
