"""The MCP server bounds what one call may hand it, answers every malformed line, and
stays responsive (round 3). On bae2764 a 50 MB query held the server for 130 s, every
other call waiting; a malformed JSON-RPC line got no reply at all; `add_memory` stored
a 100,000-character keyword and raw escape bytes in tags. Talked to over raw stdio, as
a client that is not the SDK's would."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time

import pytest

from amem_cli.limits import MAX_QUERY_CHARS, MAX_TERM_CHARS, MAX_TERMS


class Wire:
    """`amem mcp` over its stdin and stdout, one JSON-RPC message a line."""

    def __init__(self, amem_cmd, vault):
        env = {**os.environ, "AMEM_LLM": "none", "AMEM_EMBEDDER": "fake"}
        self.proc = subprocess.Popen([*amem_cmd, "--dir", str(vault), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self):
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, message) -> None:
        self.proc.stdin.write((message if isinstance(message, bytes) else json.dumps(message).encode()) + b"\n")
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict | None = None) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        return self.next_id

    def reply(self, timeout: float = 60) -> dict:
        return self.replies.get(timeout=timeout)

    def request(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        sent = self.ask(method, params)
        while (got := self.reply(timeout)).get("id") != sent:
            pass
        return got

    def tool(self, name: str, **arguments) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"]

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def wire(amem_cmd, vault):
    w = Wire(amem_cmd, vault)
    yield w
    w.close()


MALFORMED = [  # (line, JSON-RPC's error code, the id the reply must carry)
    (b"this is not JSON", -32700, None),
    (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call"', -32700, None),  # cut off
    (b"[1, 2, 3]", -32600, None),
    (b'{"jsonrpc": "2.0", "id": 8, "method": 5}', -32600, 8),
    (b'{"id": 9, "method": "ping"}', -32600, 9),
    (b'"just a string"', -32600, None),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
]


def test_each_malformed_line_is_answered_and_the_session_goes_on(wire):
    for line, code, request_id in MALFORMED:
        wire.send(line)
        got = wire.reply(10)  # on bae2764: nothing, ever
        assert got["id"] == request_id and got["error"]["code"] == code and got["error"]["message"], line
    assert wire.request("ping")["result"] == {}


def test_a_line_too_long_to_read_is_refused_and_the_next_answered(wire):
    wire.send(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "' + b"x" * (9 * 2**20) + b'"}}')
    got = wire.reply(30)
    assert got["id"] is None and got["error"]["code"] == -32600 and "longer than" in got["error"]["message"]
    assert wire.request("ping")["result"] == {}


def test_a_query_of_50_mb_is_refused_at_once_and_holds_no_one_up(wire):
    note = wire.tool("add_memory", content="The tide tables for the harbour.")["structuredContent"]
    started = time.monotonic()
    big = wire.ask("tools/call", {"name": "search_memory", "arguments": {"query": "tide " * 10_000_000}})
    small = wire.ask("tools/call", {"name": "get_note", "arguments": {"id": note["id"]}})
    replies = {}
    while len(replies) < 2:
        got = wire.reply(60)
        replies[got.get("id")] = got
    assert time.monotonic() - started < 30  # on bae2764: the search ran for minutes, the get_note waited
    assert "error" in replies.get(None, {}) or replies[big]["result"]["isError"]
    assert replies[small]["result"]["structuredContent"]["id"] == note["id"]


def test_sizes_are_bounded_each_with_an_error_reply(wire):
    over = [
        ("search_memory", {"query": "tide " * (MAX_QUERY_CHARS // 5 + 1)}),
        ("build_context", {"query": "x" * (MAX_QUERY_CHARS + 1)}),
        ("add_memory", {"content": "A note.", "keywords": ["k" * 100_000]}),
        ("add_memory", {"content": "A note.", "keywords": [f"k{i}" for i in range(MAX_TERMS + 1)]}),
        ("add_memory", {"content": "A note.", "tags": ["t" * (MAX_TERM_CHARS + 1)]}),
        ("add_memory", {"content": "A note.", "tags": ["red\x1b[31m", "ok"]}),
        ("add_memory", {"content": "A note.", "context": "c" * 5000}),
        ("add_memory", {"content": "x" * (2**20 + 1)}),
    ]
    for name, arguments in over:
        result = wire.tool(name, **arguments)
        assert result["isError"], (name, str(arguments)[:80])  # on bae2764: stored, or searched
    listed = wire.request("resources/list")["result"]["resources"]
    assert listed == []  # nothing was stored
    fits = wire.tool("add_memory", content="A note.", keywords=["k" * MAX_TERM_CHARS], tags=["ok"])
    assert not fits["isError"] and fits["structuredContent"]["keywords"] == ["k" * MAX_TERM_CHARS]


def test_the_schemas_declare_the_bounds(wire):
    tools = {t["name"]: t["inputSchema"]["properties"] for t in wire.request("tools/list")["result"]["tools"]}
    assert tools["search_memory"]["query"]["maxLength"] == MAX_QUERY_CHARS
    assert tools["build_context"]["query"]["maxLength"] == MAX_QUERY_CHARS
    keywords = tools["add_memory"]["keywords"]["anyOf"][0]
    assert keywords["maxItems"] == MAX_TERMS and keywords["items"]["maxLength"] == MAX_TERM_CHARS
    assert tools["add_memory"]["content"]["maxLength"] == 2**20


def test_pings_are_answered_while_a_long_call_runs(wire):
    """A tool runs in a thread of its own: the protocol is served meanwhile."""
    long = wire.ask("tools/call", {"name": "add_memory", "arguments": {"content": "the tides and the keeper " * 40_000}})
    pings = [wire.ask("ping") for _ in range(3)]
    answered = []
    while long not in answered:
        got = wire.reply(120)
        answered.append(got.get("id"))
    assert set(pings) <= set(answered[: answered.index(long)])


def test_the_same_bounds_hold_on_the_command_line_and_in_python(run, memory):
    """One limits module, checked where the services take the input: every way in."""
    from amem_cli.errors import UsageError

    for args in (["add", "A note.", "-k", "k" * (MAX_TERM_CHARS + 1)], ["add", "A note.", "-t", "red\x1b[31m"],
                 ["search", "x" * (MAX_QUERY_CHARS + 1)], ["context", "x" * (MAX_QUERY_CHARS + 1)],
                 ["add", "A note.", "--context", "c" * 5000]):
        res = run(*args)
        assert res.exit_code == 2 and len(res.stderr.splitlines()) == 2, (args[:2], res.output)
    with pytest.raises(UsageError, match="control character"):
        memory.add("A note.", tags=["bell\x07"])
    with pytest.raises(UsageError, match="characters long"):
        memory.search("x" * (MAX_QUERY_CHARS + 1))
    with pytest.raises(UsageError, match="at most"):
        memory.add_many([{"content": "A note.", "keywords": [f"k{i}" for i in range(MAX_TERMS + 1)]}])
