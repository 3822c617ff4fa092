"""amem mcp: the vault as an MCP server, for agents."""

from __future__ import annotations

import typer

from ..app import command, container


@command("mcp")
def mcp(ctx: typer.Context) -> None:
    """Serve the vault to an MCP client (an agent) over stdio: tools to add, search and
    read notes, and the notes as resources. Creates the vault if it does not exist."""
    from ...mcp_server import serve

    serve(container(ctx, create=True))
