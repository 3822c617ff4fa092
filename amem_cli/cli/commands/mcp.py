"""amem mcp: the vault as an MCP server, for agents."""

from __future__ import annotations

import typer

from ..app import command, session
from ..options import NoRedactOpt


@command("mcp")
def mcp(ctx: typer.Context, no_redact: NoRedactOpt = False) -> None:
    """Serve the vault to an MCP client (an agent) over stdio: tools to add, search and
    read notes, and the notes as resources. Creates the vault if it does not exist.
    Secrets in added notes are redacted."""
    from ...mcp_tools import serve

    serve(session(ctx).told_settings(), redact=not no_redact)
