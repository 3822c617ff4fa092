"""amem graph: the link graph as text for other tools, or as a page to look at."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ...errors import UsageError
from ..app import call, command
from ..completions import complete_formats, complete_ids
from ..options import BoxOpt, JsonOpt, TagOpt, local_path
from ..output import console, escape, json_printable, print_json, printable


@command("graph")
def graph(
    ctx: typer.Context,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", autocompletion=complete_formats, show_default=False,
            help="mermaid (the default: paste it into Markdown and GitHub or Obsidian draw it), "
                 "dot (Graphviz), graphml (Gephi, yEd, Cytoscape) or json.",
        ),
    ] = None,
    around: Annotated[
        str | None,
        typer.Option("--around", autocompletion=complete_ids, show_default=False,
                     help="Only the notes within --depth links of this note."),
    ] = None,
    depth: Annotated[int, typer.Option("--depth", min=1, help="How many links away from --around to go.")] = 2,
    tag: TagOpt = None,
    box: BoxOpt = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", parser=local_path, metavar="PATH", show_default=False, help="Write to this file, not standard output.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option("--html", parser=local_path, metavar="PATH", show_default=False,
                     help="Write one self-contained page that draws the graph: drag, zoom, hover (works offline)."),
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Show how notes link, as Mermaid (the default), DOT, GraphML, JSON or an HTML page."""
    from ...wire.vault import Graph

    if html and (fmt or output):
        raise UsageError("--html writes a page: it goes with neither --format nor --output", hint="run amem graph twice")
    if json_output and not (html or output) and fmt not in (None, "json"):
        raise UsageError(f"--json prints JSON, not {fmt}", hint="leave out one of --json and --format")
    kind = "html" if html else fmt or ("json" if json_output and not output else "mermaid")
    target = html or output
    g = call(ctx, Graph(format=kind, around=around, depth=depth, tags=tag, boxes=box))
    text = g.text
    if target is None:  # a terminal, perhaps: a file gets the text as it is
        typer.echo(json_printable(text) if kind == "json" else printable(text, lines=True), nl=False)
        return
    _write(target, text)
    if json_output:
        print_json({"file": str(target), "format": kind, "notes": g.notes, "links": g.links,
                    "sequence_links": g.sequence_links})
    else:
        console.print(f"Wrote {escape(str(target))}: {g.notes} notes, {g.links} links, {g.sequence_links} sequence links.")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}", hint="choose another file") from None
