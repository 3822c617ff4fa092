"""The MCP server's stdio transport: the SDK's, with an answer for every line.

The SDK's reader drops a line that is not a JSON-RPC message (it only logs it), so a
client that sent one waits for ever. JSON-RPC 2.0 says what to answer: -32700 (parse
error) for a line that is not JSON, -32600 (invalid request) for JSON that is no
JSON-RPC message, each with the request's id where it can be told, else null. A line
over MAX_LINE bytes is refused as invalid without being read into memory whole.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable

import anyio
import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .limits import MAX_CONTENT_BYTES

# One message a line. The largest a tool takes is a note's text, which JSON may write
# six bytes a character (\u00e9): room for that and the rest of the request.
MAX_LINE = 8 * MAX_CONTENT_BYTES


def run(server: MCPServer) -> None:
    """`server.run("stdio")`, answering malformed input."""
    anyio.run(_serve, server)


async def _serve(server: MCPServer) -> None:
    lines = _Lines(sys.stdin.buffer)
    async with stdio_server(stdin=lines) as (read, write):
        # Set before the SDK's reader first asks for a line (it runs once this task waits).
        lines.reply = lambda error: write.send(SessionMessage(error))
        low = server._lowlevel_server  # as MCPServer.run_stdio_async serves it
        await low.run(read, write, low.create_initialization_options())


class _Lines:
    """Standard input's lines for the SDK's reader: the JSON-RPC messages; the rest is
    answered here and left out."""

    def __init__(self, stdin):
        self.stdin = stdin
        self.reply: Callable[[types.JSONRPCError], Awaitable[None]] | None = None

    def __aiter__(self) -> "_Lines":
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._readline(MAX_LINE + 1)
            if not line:
                raise StopAsyncIteration
            if len(line) > MAX_LINE:
                while line and not line.endswith(b"\n"):  # the rest of it, a piece at a time
                    line = await self._readline(MAX_LINE)
                await self._error(None, types.INVALID_REQUEST, f"Invalid Request: longer than {MAX_LINE:,} bytes")
                continue
            text = line.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                message = json.loads(text)
            except ValueError as exc:
                await self._error(None, types.PARSE_ERROR, f"Parse error: {exc}")
                continue
            try:
                types.jsonrpc_message_adapter.validate_python(message, by_name=False)
                if isinstance(message.get("id"), (bool, float)):  # pydantic would take true for 1
                    raise ValueError("an id is a string or a whole number")
            except (ValidationError, ValueError):
                await self._error(_id_of(message), types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
                continue
            return text

    async def _readline(self, limit: int) -> bytes:
        """A line of at most `limit` bytes (its first `limit` when longer), read in a thread."""
        return await anyio.to_thread.run_sync(self.stdin.readline, limit, abandon_on_cancel=True)

    async def _error(self, request_id, code: int, message: str) -> None:
        assert self.reply is not None
        await self.reply(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)))


def _id_of(message) -> str | int | None:
    """The id of a malformed request, where it can be told (JSON-RPC: else null)."""
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None
