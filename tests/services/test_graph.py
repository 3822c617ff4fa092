"""The link graph (services/graph.py): what is in it, and how each writer escapes.
Real SQLite on note files (see `graph_vault` in conftest)."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from amem_cli.config import load_settings
from amem_cli.container import Container
from amem_cli.errors import NotFoundError, UsageError
from amem_cli.services import graph as views
from amem_cli.services.graph import Graph, GraphEdge, GraphNode, build_graph
from conftest import HOSTILE

# HOSTILE as build_graph hands it to the writers: one line, no control characters.
TEXT = HOSTILE.replace("\x01", "").replace("\n", " ")


@pytest.fixture
def index(graph_vault):
    c = Container(load_settings(dir=str(graph_vault), embedder="fake"))
    c.indexer.sync()
    yield c.index
    c.close()


def shape(g: Graph) -> tuple[set[str], set[tuple[str, str, str]]]:
    return {n.id for n in g.nodes}, {(e.source, e.target, e.kind) for e in g.edges}


def test_whole_vault(index):
    ids, edges = shape(build_graph(index))
    assert ids == {"a", "b", "c", "d", "e"}
    # a and b link each other: one edge; the sequence is stored by c and d: one edge, c -> d.
    assert edges == {("a", "b", "link"), ("b", "c", "link"), ("c", "d", "sequence")}


@pytest.mark.parametrize(
    "around, depth, expected",
    [("a", 1, {"a", "b"}), ("a", 2, {"a", "b", "c"}), ("a", 3, {"a", "b", "c", "d"}), ("d", 1, {"c", "d"}), ("e", 2, {"e"})],
)
def test_around(index, around, depth, expected):
    g = build_graph(index, around=around, depth=depth)
    ids, edges = shape(g)
    assert ids == expected and g.around == around
    assert all(s in ids and t in ids for s, t, _ in edges)


def test_filters_choose_the_notes_and_the_walk_keeps_to_them(index):
    assert shape(build_graph(index, tags=["x"])) == ({"a", "c", "e"}, set())
    assert shape(build_graph(index, boxes=["one"]))[0] == {"a", "e"}
    # The note walked around is kept even when it does not match; its neighbours must.
    assert shape(build_graph(index, around="b", depth=2, tags=["x"])) == (
        {"a", "b", "c"}, {("a", "b", "link"), ("b", "c", "link")})


def test_unknown_or_bad_id(index):
    with pytest.raises(NotFoundError) as err:
        build_graph(index, around="nope")
    assert err.value.exit_code == 3
    with pytest.raises(UsageError):
        build_graph(index, around="../x")


def test_node_fields(index):
    nodes = {n.id: n for n in build_graph(index).nodes}
    assert nodes["a"].tags == ["x"] and nodes["a"].boxes == ["one"] and nodes["a"].created.startswith("2025-01-01")
    label = nodes["e"].label
    assert "\n" not in label and "\x01" not in label and len(label) <= views.LABEL_WIDTH
    assert label.endswith("…") and label.startswith('Say "hi" </script>')


@pytest.fixture
def hostile():
    """A graph built by hand: ids that meet after Mermaid's sanitising, hostile text."""
    return Graph(
        [GraphNode("a-b", TEXT, TEXT, ["t"], ["box"], None), GraphNode("a_b", "plain", "", [], [], "2025-01-01")],
        [GraphEdge("a-b", "a_b", "link"), GraphEdge("a_b", "a-b", "sequence")],
        around="a-b",
    )


def test_mermaid(hostile):
    lines = views.to_mermaid(hostile).splitlines()
    assert lines[0] == "graph LR"
    (first, label), (second, _) = (re.fullmatch(r'  (\w+)\["([^"]*)"\]', line).groups() for line in lines[1:3])
    assert first != second  # "a-b" and "a_b" stay two nodes
    assert not set(label) & set('"<>&`\n') and "#34;" in label and "#60;/script#62;" in label
    assert f"  {first} --- {second}" in lines and f"  {second} -.-> {first}" in lines


def test_dot(hostile):
    text = views.to_dot(hostile)
    assert text.startswith("digraph amem {") and text.endswith("}\n")
    quoted = r'"(?:[^"\\]|\\.)*"'
    node = re.compile(rf"  {quoted} \[label={quoted}, tooltip={quoted}(, penwidth=3)?\];")
    lines = text.splitlines()
    assert all(node.fullmatch(line) for line in lines[2:4]), lines[2:4]
    assert '"a-b" -> "a_b" [dir=none];' in text and '"a_b" -> "a-b" [style=dashed];' in text


def test_graphml_round_trips(hostile):
    text = views.to_graphml(hostile)
    ET.fromstring(text.encode())  # well-formed XML
    g = nx.read_graphml(io.BytesIO(text.encode()))
    assert g.nodes["a-b"]["label"] == TEXT and g.nodes["a-b"]["tags"] == "t" and "created" not in g.nodes["a-b"]
    assert g.edges["a_b", "a-b"]["kind"] == "sequence" and g.nodes["a_b"]["created"] == "2025-01-01"


def test_json_keys(hostile):
    data = json.loads(views.render(hostile, "json"))
    assert list(data) == ["nodes", "edges", "around"]
    assert list(data["nodes"][0]) == ["id", "label", "context", "tags", "boxes", "created"]
    assert list(data["edges"][0]) == ["source", "target", "kind"]
    assert data == hostile.to_dict()


def test_unknown_format(hostile):
    with pytest.raises(UsageError):
        views.render(hostile, "svg")


def test_html_inlines_the_data_safely(hostile):
    page = views.to_html(hostile, "<b>vault</b>")
    assert "<title>&lt;b&gt;vault&lt;/b&gt;</title>" in page
    assert "<script>document" not in page and "<b>" not in page  # the note's markup stays data
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', page, re.S).group(1)
    assert json.loads(data) == hostile.to_dict()
    assert "http://" not in page and "https://" not in page  # nothing to fetch
