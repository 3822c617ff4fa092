"""Who may import whom, read from the source (AST): production code never imports a
test double to ask what it is, the indexer stays below the pipeline, and the pipeline
does not call back into `NoteService` (it is handed the writer they share)."""

from __future__ import annotations

import ast
from pathlib import Path

import amem_cli

PACKAGE = Path(amem_cli.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """The modules `path` imports, relative imports resolved (`from x import y`: x and x.y)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def modules() -> dict[str, set[str]]:
    return {module_name(p): imports(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_the_resolver_sees_relative_imports():
    found = imports(PACKAGE / "services" / "notes.py")
    assert {"amem_cli.services.writer", "amem_cli.services.writer.NoteWriter", "amem_cli.models.Note"} <= found


def test_only_make_llm_imports_the_fake_llms():
    """`--llm fake` is chosen by name in `make_llm`; nothing else asks for a fake, let
    alone tests for its type (no model is `llm is None`)."""
    importers = {m for m, found in modules().items() if any(i.startswith("amem_cli.llm.fake") for i in found)}
    assert importers == {"amem_cli.llm"}
    named = {p.name for p in PACKAGE.rglob("*.py") if p.name != "fake.py" and "NoLLM" in p.read_text(encoding="utf-8")}
    assert named == set()


def test_the_indexer_does_not_import_the_pipeline():
    found = modules()["amem_cli.services.indexer"]
    assert not {i for i in found if i.startswith(("amem_cli.steps", "amem_cli.services.pipeline"))}


def test_the_pipeline_and_the_writer_do_not_import_the_note_service():
    for name in ("amem_cli.services.pipeline", "amem_cli.services.writer"):
        assert not {i for i in modules()[name] if i.startswith("amem_cli.services.notes")}, name


# The layers, top to bottom: a module may import its own layer and the ones below it,
# never one above. The first name that prefixes a module's name places it.
LAYERS = [
    ("entry", ["amem_cli.__main__", "amem_cli.cli", "amem_cli.server.daemon", "amem_cli.mcp_tools", "amem_cli.mcp_stdio"]),
    ("client and façade", ["amem_cli.server", "amem_cli.operations", "amem_cli.api", "amem_cli.container"]),
    ("services", ["amem_cli.services"]),
    ("steps and retrieval", ["amem_cli.steps", "amem_cli.retrieve"]),
    ("index, files, models, embedders", ["amem_cli.index", "amem_cli.vault", "amem_cli.markdown", "amem_cli.changes",
                                         "amem_cli.watch", "amem_cli.llm", "amem_cli.embed", "amem_cli.redact",
                                         "amem_cli.transcripts", "amem_cli.config"]),
    ("base", ["amem_cli.models", "amem_cli.errors", "amem_cli.ids", "amem_cli.timeutil", "amem_cli.time_phrases", "amem_cli.utf8",
              "amem_cli.places", "amem_cli.links", "amem_cli.text", "amem_cli.secret_formats", "amem_cli.escapes",
              "amem_cli.wire", "amem_cli.records", "amem_cli.global_options", "amem_cli.limits"]),
]
# `amem serve` runs the warm server in the foreground: the one command that is the daemon.
ALLOWED = {
    ("amem_cli.cli.commands.server", "amem_cli.server.daemon"),
}


def layer_of(module: str) -> int | None:
    if module == "amem_cli":
        return 1  # the package re-exports the Python API
    for depth, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return depth
    return None


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer_of(m) is None] == []


def test_no_module_imports_a_layer_above_its_own():
    known = set(modules()) - {"amem_cli"}  # the package itself runs before any of its modules: not an edge
    upward = sorted(
        (m, target)
        for m, found in modules().items()
        for target in found
        if target in known and layer_of(target) < layer_of(m) and (m, target) not in ALLOWED
    )
    assert upward == []


def test_only_the_operations_layer_reaches_the_container():
    """Every way in goes through the operations: no entry module (the CLI, the servers, MCP)
    and no other module of the façade layer (the Python API, the server's client and its
    workers) imports the container; the operations build it."""
    importers = {m for m, found in modules().items() if "amem_cli.container" in found}
    assert importers == {"amem_cli.operations"}


def test_the_servers_import_no_cli_and_no_typer():
    """The warm server and the MCP server serve the façade; the CLI is only a client."""
    for name, found in modules().items():
        if name.startswith("amem_cli.server.") or name == "amem_cli.mcp_tools":
            assert not {i for i in found if i.startswith(("amem_cli.cli", "typer", "click"))}, name


def test_the_quick_readers_path_imports_no_typer():
    """`cli/quick.py` saves the everyday commands Typer's import (~60 ms a command): nothing
    on its way may bring Typer back (`entry` turns to Typer only when `quick` declines)."""
    path = {"amem_cli.cli.quick", "amem_cli.cli.actions", "amem_cli.cli.session",
            "amem_cli.cli.output", "amem_cli.server.client", "amem_cli.server.protocol"}
    found = modules()
    for name in path:
        assert not {i for i in found[name] if i.startswith(("typer", "click", "amem_cli.cli.app", "amem_cli.cli.commands"))}, name


# What the composition root builds: a name (or an attribute) for one of these is a part.
PARTS = {"c", "container", "facade", "index", "indexer", "vectors", "embedder", "writer", "pipeline", "notes", "search",
         "importer", "ingester", "doctor", "queue", "llm", "vault", "trash", "worker"}


def changed_from_outside(path: Path) -> list[str]:
    """Where `path` assigns an attribute of a part that is not its own (`c.llm = ...`,
    `indexer.on_edit = ...`, `self._c.x = ...`) or of one of amem's modules (a process-wide
    global: `timeutil.date_order = ...`), or fills an object's `__dict__`."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and (node.level or (node.module or "").startswith("amem_cli")) for alias in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Attribute) and sub.value.attr == "__dict__":
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(target)}")
                if not (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)):
                    continue
                chain, base = [], sub.value  # the names the assigned attribute hangs from
                while isinstance(base, ast.Attribute):
                    chain.insert(0, base.attr)
                    base = base.value
                chain.insert(0, base.id if isinstance(base, ast.Name) else "?")
                names = {name.lstrip("_") for name in (chain[1:] if chain[0] == "self" else chain)}
                if names & PARTS or (chain[0] in modules and len(chain) == 1):
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(target)}")
    return found


def test_no_part_is_changed_from_outside_once_built():
    """A container, a facade and each service get what they need at construction (a
    server's hooks, the model and its wrapper, the date order): no module assigns an
    attribute of one it did not build itself, nor fills an object's `__dict__`."""
    assert [where for path in sorted(PACKAGE.rglob("*.py")) for where in changed_from_outside(path)] == []
