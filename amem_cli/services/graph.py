"""The link graph for people to look at: notes as nodes, links and sequence links as
edges, for the whole vault or around one note, written as Mermaid, DOT, GraphML, JSON
or one self-contained HTML page."""

from __future__ import annotations

import io
import json
import re
import unicodedata
from collections import defaultdict
from dataclasses import asdict, dataclass
from importlib.resources import files

from ..errors import NotFoundError, UsageError
from ..ids import check_id

FORMATS = ("mermaid", "dot", "graphml", "json")
LABEL_WIDTH = 60  # characters of a note's text shown as its label


@dataclass(frozen=True)
class GraphNode:
    id: str
    label: str  # the start of the note's text, on one line
    context: str
    tags: list[str]
    boxes: list[str]
    created: str | None


@dataclass(frozen=True)
class GraphEdge:
    source: str
    target: str
    kind: str  # "link" (one per linked pair), "sequence" (previous -> next) or "supersedes" (newer -> older)


@dataclass
class Graph:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    around: str | None = None  # the note a neighbourhood was taken around

    def to_dict(self) -> dict:
        return {
            "nodes": [asdict(n) for n in self.nodes],
            "edges": [asdict(e) for e in self.edges],
            "around": self.around,
        }


def build_graph(
    index, *, around: str | None = None, depth: int = 2, tags: list[str] | None = None, boxes: list[str] | None = None
) -> Graph:
    """The notes that match the filters and the edges between them; with `around`, only
    those within `depth` hops of that note (walking through matching notes only)."""
    notes = {n.id: n for n in index.notes.list(tags=tags, boxes=boxes, newest_first=False)}
    if around is not None:
        centre = index.notes.get(check_id(around))
        if centre is None:
            raise NotFoundError(f"no note with the id {around}", hint="see `amem list` for the ids")
        notes.setdefault(centre.id, centre)
    edges = _edges(index, set(notes))
    if around is not None:
        near = _within(around, depth, edges)
        notes = {i: n for i, n in notes.items() if i in near}
        edges = [e for e in edges if e.source in near and e.target in near]
    nodes = [
        GraphNode(
            id=n.id,
            label=_snippet(n.content, LABEL_WIDTH),
            context=_clean(n.context),
            tags=[_clean(t) for t in n.tags],
            boxes=[_clean(b) for b in n.boxes],
            created=n.created_at.isoformat() if n.created_at else None,
        )
        for n in notes.values()
    ]
    return Graph(nodes, edges, around)


def _edges(index, ids: set[str]) -> list[GraphEdge]:
    """Links once per pair, whichever note made them (in its frontmatter or its text);
    sequence links as previous -> next (each is stored by both notes); supersessions as
    newer -> older, whichever note states them. Links to notes outside `ids` are left out."""
    seen: set = set()
    edges = []
    for src, dst, kind in index.links.all():
        if src == dst or src not in ids or dst not in ids:
            continue
        if kind in ("previous", "next"):
            a, b = (src, dst) if kind == "next" else (dst, src)
            key, edge = (a, b), GraphEdge(a, b, "sequence")
        elif kind in ("supersedes", "superseded_by"):
            a, b = (src, dst) if kind == "supersedes" else (dst, src)
            key, edge = ("supersedes", a, b), GraphEdge(a, b, "supersedes")
        else:
            key, edge = frozenset((src, dst)), GraphEdge(src, dst, "link")
        if key not in seen:
            seen.add(key)
            edges.append(edge)
    return edges


def _within(centre: str, depth: int, edges: list[GraphEdge]) -> set[str]:
    adjacent = defaultdict(set)
    for e in edges:
        adjacent[e.source].add(e.target)
        adjacent[e.target].add(e.source)
    near, frontier = {centre}, {centre}
    for _ in range(depth):
        frontier = {m for n in frontier for m in adjacent[n]} - near
        near |= frontier
    return near


def _clean(text: str) -> str:
    """One line without control characters (XML 1.0 forbids most of them)."""
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cc" or ch.isspace())
    return " ".join(text.split())


def _snippet(text: str, width: int) -> str:
    line = _clean(text)
    return line if len(line) <= width else line[: width - 1] + "…"


# -- writers --------------------------------------------------------------------------


def render(graph: Graph, fmt: str) -> str:
    writers = {"mermaid": to_mermaid, "dot": to_dot, "graphml": to_graphml, "json": to_json}
    if fmt not in writers:
        raise UsageError(f"unknown graph format {fmt!r}", hint=f"use one of: {', '.join(FORMATS)}")
    return writers[fmt](graph)


def to_json(graph: Graph) -> str:
    return json.dumps(graph.to_dict(), ensure_ascii=False, indent=2) + "\n"


def to_mermaid(graph: Graph) -> str:
    """`graph LR`: links as plain lines, sequence links as dotted arrows, supersessions as
    thick arrows from the newer note."""
    names: dict[str, str] = {}
    for n in graph.nodes:
        # Mermaid ids are words; note ids may hold '-' and '.', so two can meet after this.
        base = "n_" + re.sub(r"\W", "_", n.id, flags=re.ASCII)
        name, i = base, 1
        while name in names.values():
            i += 1
            name = f"{base}_{i}"
        names[n.id] = name
    lines = ["graph LR"]
    lines += [f'  {names[n.id]}["{_mermaid_text(n.label)}"]' for n in graph.nodes]
    arrows = {"link": "---", "sequence": "-.->", "supersedes": "==>|supersedes|"}
    lines += [f"  {names[e.source]} {arrows[e.kind]} {names[e.target]}" for e in graph.edges]
    if graph.around:
        lines.append(f"  style {names[graph.around]} stroke-width:3px")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid's entity codes (#NN;): nothing in a label can end it or become markup.
    return re.sub(r'["#&<>`]', lambda m: f"#{ord(m.group())};", text)


def to_dot(graph: Graph) -> str:
    """Graphviz: one digraph; links drawn without arrow heads, sequence links dashed,
    supersessions bold and labelled."""
    lines = ["digraph amem {", "  node [shape=box, style=rounded];"]
    for n in graph.nodes:
        extra = ", penwidth=3" if n.id == graph.around else ""
        lines.append(f"  {_dot(n.id)} [label={_dot(n.label)}, tooltip={_dot(n.context or n.label)}{extra}];")
    for e in graph.edges:
        style = {"link": "dir=none", "sequence": "style=dashed", "supersedes": 'style=bold, label="supersedes"'}[e.kind]
        lines.append(f"  {_dot(e.source)} -> {_dot(e.target)} [{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_graphml(graph: Graph) -> str:
    """GraphML through networkx (it escapes the XML); tags and boxes as ', '-joined text."""
    import networkx as nx

    g = nx.DiGraph()
    for n in graph.nodes:
        attrs = {"label": n.label, "context": n.context, "tags": ", ".join(n.tags), "boxes": ", ".join(n.boxes),
                 "created": n.created}
        g.add_node(n.id, **{k: v for k, v in attrs.items() if v})
    for e in graph.edges:
        g.add_edge(e.source, e.target, kind=e.kind)
    buf = io.BytesIO()
    nx.write_graphml(g, buf, encoding="utf-8", named_key_ids=True)
    return buf.getvalue().decode("utf-8") + "\n"


def to_html(graph: Graph, title: str) -> str:
    """One page that draws the graph (plain JavaScript, no network: the page's policy
    forbids any request). The data goes in as JSON with `<`, `>` and `&` escaped, so no
    note text can close the script element or become markup."""
    import html

    data = json.dumps(graph.to_dict(), ensure_ascii=False)
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    page = files(__package__).joinpath("graph.html").read_text(encoding="utf-8")
    values = {"TITLE": html.escape(title), "GRAPH_DATA": data}
    return re.sub(r"__(TITLE|GRAPH_DATA)__", lambda m: values[m.group(1)], page)
