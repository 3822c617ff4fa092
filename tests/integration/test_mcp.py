"""`amem mcp`: the vault served to an MCP client over stdio, through the SDK's own client."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timedelta

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from conftest import facade_on, internals

TOOLS = {"add_memory", "search_memory", "get_note", "build_context", "list_boxes", "supersede", "supersede_suggestions"}


def test_mcp_over_stdio(vault, tmp_path, amem_cmd):
    params = StdioServerParameters(
        command=amem_cmd[0],
        args=[*amem_cmd[1:], "--dir", str(vault), "--embedder", "fake", "mcp"],
        env={**os.environ, "AMEM_LLM": "none", "AMEM_EMBEDDER": "fake"},
    )
    log = tmp_path / "server-stderr.log"

    async def session_run() -> None:
        with log.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()

                tools = {t.name: t for t in (await s.list_tools()).tools}
                assert set(tools) == TOOLS
                search_schema = tools["search_memory"].input_schema
                assert search_schema["required"] == ["query"]
                assert search_schema["properties"]["mode"]["enum"] == ["hybrid", "semantic", "keyword", "graph"]
                assert search_schema["properties"]["query"]["description"]
                assert tools["add_memory"].output_schema["properties"]["pending"]

                tea = await s.call_tool("add_memory", {"content": "Alice prefers tea over coffee.", "tags": ["people"]})
                assert not tea.is_error
                tea = tea.structured_content
                assert tea["tags"] == ["people"] and tea["pending"] is False  # no model: no work queued
                assert tea["keywords"] and tea["boxes"]  # the deterministic methods' fields, at once
                deploy = await s.call_tool(
                    "add_memory", {"content": "The deploy key lives in the team vault.", "keywords": ["deploy key"]}
                )
                deploy = deploy.structured_content

                found = await s.call_tool("search_memory", {"query": "what does Alice drink? tea", "limit": 2})
                assert not found.is_error
                hits = found.structured_content["result"]
                assert hits[0]["id"] == tea["id"] and hits[0]["content"] == "Alice prefers tea over coffee."
                assert {"id", "score", "content", "context", "tags", "created_at"} <= set(hits[0])
                keyword = await s.call_tool("search_memory", {"query": "deploy key", "mode": "keyword"})
                assert keyword.structured_content["result"][0]["id"] == deploy["id"]

                note = (await s.call_tool("get_note", {"id": deploy["id"]})).structured_content
                assert note["content"] == "The deploy key lives in the team vault." and note["keywords"] == ["deploy key"]

                context = await s.call_tool("build_context", {"query": "Alice tea", "max_tokens": 500})
                assert f"[{tea['id']}]" in context.content[0].text
                # `now`: when the query is asked, and "four weeks ago" in it with it.
                jasmine = await s.call_tool("add_memory", {"content": "Alice ordered jasmine tea.", "created_at": "2024-03-04"})
                jasmine = jasmine.structured_content["id"]
                month = (datetime.now() + timedelta(days=28)).date().isoformat()
                for now, first in (("2024-04-01", jasmine), (month, tea["id"])):
                    dated = await s.call_tool("search_memory", {"query": "Alice tea four weeks ago", "now": now})
                    assert dated.structured_content["result"][0]["id"] == first, now
                    block = await s.call_tool("build_context", {"query": "Alice tea four weeks ago", "now": now, "top_k": 1})
                    assert f"[{first}]" in block.content[0].text
                bad_now = await s.call_tool("search_memory", {"query": "tea", "now": "soon"})
                assert bad_now.is_error and "cannot read the date 'soon'" in bad_now.content[0].text

                # Filed in boxes (deterministically, without a model).
                for _ in range(100):
                    boxes = (await s.call_tool("list_boxes", {})).structured_content["result"]
                    if boxes:
                        break
                    await asyncio.sleep(0.05)
                assert all(set(b) == {"box", "notes"} and b["notes"] >= 1 for b in boxes) and boxes

                listed = {str(r.uri) for r in (await s.list_resources()).resources}
                assert {f"amem://note/{tea['id']}", f"amem://note/{deploy['id']}"} <= listed
                read = await s.read_resource(f"amem://note/{tea['id']}")
                assert read.contents[0].mime_type == "text/markdown"
                assert read.contents[0].text == (vault / f"{tea['id']}.md").read_text(encoding="utf-8")
                # With no model (`--llm none`) the deterministic method is the method: its
                # fields are not marked as a model's fallbacks.
                assert "amem_fallbacks" not in read.contents[0].text and "keywords:" in read.contents[0].text

                # Errors come back as MCP errors; the session carries on.
                missing = await s.call_tool("get_note", {"id": "20990101T000000000-none"})
                assert missing.is_error and "no note with the id 20990101T000000000-none" in missing.content[0].text
                assert "hint:" in missing.content[0].text
                empty = await s.call_tool("add_memory", {"content": "   "})
                assert empty.is_error and "the note is empty" in empty.content[0].text
                bad_mode = await s.call_tool("search_memory", {"query": "tea", "mode": "psychic"})
                assert bad_mode.is_error and "mode" in bad_mode.content[0].text
                try:
                    await s.read_resource("amem://note/20990101T000000000-none")
                    raise AssertionError("reading an unknown note should fail")
                except MCPError as exc:
                    assert "no note with the id" in str(exc)
                again = await s.call_tool("get_note", {"id": tea["id"]})
                assert not again.is_error and again.structured_content["id"] == tea["id"]

    asyncio.run(session_run())
    assert "Traceback" not in log.read_text()


def test_unexpected_errors_are_tool_errors(vault, monkeypatch):
    """A bug inside a tool is reported to the client as an error, and the server goes on."""
    import threading

    from mcp import Client

    from amem_cli.mcp_tools import build
    from amem_cli.server.worker import Turn

    facade = facade_on(vault, llm=None)
    server = build(facade, Turn(), threading.Event())

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    async def run() -> None:
        async with Client(server) as client:
            added = await client.call_tool("add_memory", {"content": "Kept through a failing search."})
            assert not added.is_error
            with monkeypatch.context() as m:
                m.setattr(internals(facade).search, "search", broken)
                failed = await client.call_tool("search_memory", {"query": "kept"})
            assert failed.is_error and "internal error: RuntimeError: boom" in failed.content[0].text
            found = await client.call_tool("search_memory", {"query": "kept"})
            assert found.structured_content["result"][0]["id"] == added.structured_content["id"]

    try:
        asyncio.run(run())
    finally:
        facade.close()


def test_tools_answer_json_even_when_nothing_is_found(vault):
    """No tool answers an empty string or no content at all (an empty list used to give
    none): each answers one JSON object, and build_context a line saying why it is empty."""
    import json
    import threading

    from mcp import Client

    from amem_cli.mcp_tools import build
    from amem_cli.server.worker import Turn

    facade = facade_on(vault)
    server = build(facade, Turn(), threading.Event())

    def said(reply) -> str:
        assert not reply.is_error and len(reply.content) == 1 and reply.content[0].text
        return reply.content[0].text

    async def run() -> None:
        async with Client(server) as client:
            boxes = await client.call_tool("list_boxes", {})
            assert json.loads(said(boxes)) == boxes.structured_content == {"result": []}
            await client.call_tool("add_memory", {"content": "Alice prefers green tea over coffee."})
            await client.call_tool("add_memory", {"content": "The server runs on port 8080."})
            found = await client.call_tool("search_memory", {"query": "zeppelin airship", "limit": 5})
            assert json.loads(said(found)) == found.structured_content == {"result": [], "hint": None}
            tea = (await client.call_tool("search_memory", {"query": "green tea", "limit": 5})).structured_content
            assert [h["content"] for h in tea["result"]] == ["Alice prefers green tea over coffee."]  # not the port note
            common = (await client.call_tool("search_memory", {"query": "a"})).structured_content
            assert common["result"] == [] and "only common words" in common["hint"]
            empty = await client.call_tool("build_context", {"query": "zeppelin airship"})
            assert said(empty) == "No note matched the query."
            assert empty.structured_content == {"query": "zeppelin airship", "context": "", "tokens": 0, "notes": [], "hint": None}
            small = await client.call_tool("build_context", {"query": "green tea", "max_tokens": 1})
            assert said(small) == "No matching note fits in max_tokens."
            block = await client.call_tool("build_context", {"query": "green tea"})
            assert said(block) == block.structured_content["context"] and block.structured_content["notes"]

    try:
        asyncio.run(run())
    finally:
        facade.close()


def test_the_current_fact_comes_first_over_mcp(vault):
    """Issue 38's two cases through the MCP tools: the newer decision first, the older one
    marked in search_memory, left out of build_context (which says what the newer replaces),
    and a suggestion confirmed with supersede."""
    import threading

    from mcp import Client

    from amem_cli.mcp_tools import build
    from amem_cli.server.worker import Turn

    facade = facade_on(vault)
    server = build(facade, Turn(), threading.Event())

    async def add(client, text: str, when: str) -> dict:
        return (await client.call_tool("add_memory", {"content": text, "created_at": when})).structured_content

    async def run() -> None:
        async with Client(server) as client:
            cache = await add(client, "Decided to cache API responses with a 10-minute TTL.", "2024-03-01T10:00")
            await add(client, "Events gateway cut-over scheduled for April 15, 22:00 UTC.", "2024-03-04T10:00")
            await add(client, "The CDN purges run every night at 02:00.", "2024-03-11T10:00")
            changed = await add(client, "Caching decision changed (Mar 19): we now cache API responses for 60 minutes, "
                                        "not 10.", "2024-03-19T10:00")
            assert changed["supersedes"] == [cache["id"]]
            moved = await add(client, "Events gateway cut-over is April 10, not April 15.", "2024-03-28T10:00")
            for query, new in (("what did we decide about caching?", changed), ("when is the events gateway cut-over?", moved)):
                hits = (await client.call_tool("search_memory", {"query": query})).structured_content["result"]
                old = new["supersedes"][0]
                ids = [h["id"] for h in hits]
                assert ids.index(new["id"]) < ids.index(old)
                assert hits[ids.index(old)]["replaced_by"][0]["id"] == new["id"]
                block = (await client.call_tool("build_context", {"query": query})).structured_content
                assert block["notes"][0] == new["id"] and old not in block["notes"] and f"(replaces {old} of " in block["context"]
                then = (await client.call_tool("build_context", {"query": query, "as_of": new["created_at"][:10] + "T00:00"}))
                assert then.structured_content["notes"][0] == old
            backwards = await client.call_tool("supersede", {"old": moved["id"], "new": moved["supersedes"][0]})
            assert backwards.is_error and "must be the newer" in backwards.content[0].text
            undone = await client.call_tool("supersede", {"old": moved["supersedes"][0], "new": moved["id"], "undo": True})
            assert undone.structured_content["supersedes"] is False
            assert (await client.call_tool("supersede_suggestions", {})).structured_content == {"result": []}
            again = await add(client, "The CDN purges run every night at 02:00.", "2024-04-01T10:00")
            assert again["duplicate"] is True and again["pending"] is False

    try:
        asyncio.run(run())
    finally:
        facade.close()
