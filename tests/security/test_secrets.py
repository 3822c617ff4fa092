"""Secrets through every way in (`amem add`, `amem ingest`, `amem import`, the MCP
server's add_memory): none of the 244 real-shaped secrets of `secret_corpus` is left in
the note files, in any byte under `.amem/` (SQLite, its WAL, the vector store, the
queue) or in what the model is sent; the 600 decoys pass (<= 1% altered)."""

from __future__ import annotations

import asyncio
import json
import random
import threading

import pytest
from conftest import facade_on

from amem_cli.llm.fake import ScriptedLLM
from amem_cli.llm.fake import schema_example
from secret_corpus import decoys, secrets

SECRETS = secrets()
DECOYS = decoys()
PER_NOTE = 20  # corpus items a note holds


def _items() -> list[str]:
    """Every secret's sentence and every decoy, in one seeded shuffle."""
    items = [sentence for _, _, sentence in SECRETS] + DECOYS
    random.Random(3).shuffle(items)
    return items


def _chunks(items: list[str]) -> list[str]:
    return ["\n".join(items[i : i + PER_NOTE]) for i in range(0, len(items), PER_NOTE)]


def _answer(messages, schema):
    """Links every candidate shown (so neighbours' text reaches link and evolve prompts);
    otherwise the smallest valid reply."""
    if set(schema.get("properties", {})) == {"links"}:
        return {"links": schema["properties"]["links"]["items"]["enum"][:1]}
    return schema_example(messages, schema)


@pytest.fixture
def llm(monkeypatch) -> ScriptedLLM:
    """The model every container of this test gets: it records what it is sent."""
    recording = ScriptedLLM(default=_answer)
    monkeypatch.setattr("amem_cli.llm.make_llm", lambda *args, **kwargs: recording)
    monkeypatch.setenv("AMEM_LINK_THRESHOLD", "-1")  # every neighbour is a candidate
    monkeypatch.setenv("AMEM_MODEL_FIELDS", "all")  # the model is asked for every field, so its prompts are checked
    return recording


def _leaks(texts: dict[str, bytes]) -> list[tuple[str, str]]:
    """(where, kind) for each secret found anywhere in `texts`; a private key's lines too."""
    found = []
    for kind, value, _ in SECRETS:
        parts = [value] + [line for line in value.splitlines() if len(line) >= 16 and "PRIVATE KEY" not in line]
        for where, data in texts.items():
            if any(p.encode() in data for p in parts):
                found.append((where, kind))
    return found


def _everything(vault, llm: ScriptedLLM, *outputs: str) -> dict[str, bytes]:
    texts = {str(p.relative_to(vault)): p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    texts["llm prompts"] = "\n".join(c.prompt for c in llm.calls).encode()
    texts["command output"] = "\n".join(outputs).encode()
    return texts


def _altered_decoys(vault) -> list[str]:
    notes = "".join(p.read_text(encoding="utf-8") for p in vault.glob("*.md"))
    return [d for d in DECOYS if d not in notes]


def _check(vault, llm, *outputs) -> None:
    texts = _everything(vault, llm, *outputs)
    assert len(texts) > 5 and any(k.startswith(".amem/chroma") for k in texts)
    assert llm.calls  # the model was asked, so its prompts are a real check
    assert _leaks(texts) == []
    altered = _altered_decoys(vault)
    print(f"{len(SECRETS)} secrets, {len(DECOYS)} decoys, {len(altered)} decoys altered, {len(llm.calls)} prompts")
    assert len(altered) <= len(DECOYS) // 100, altered[:3]


def test_add(run, vault, llm):
    outputs = []
    for text in _chunks(_items()):
        res = run("add", "--wait", "--json", text)
        assert res.exit_code == 0, res.output
        outputs.append(res.stdout)
    # Every field a caller gives is redacted, not only the text.
    kind, key, _ = SECRETS[0]
    res = run("add", "--wait", "deploy checklist", "-k", key, "-t", SECRETS[1][1], "--context", f"uses {SECRETS[2][1]}",
              "--box", SECRETS[3][1], "--meta", f"token={SECRETS[4][1]}")
    assert res.exit_code == 0, res.output
    assert "5 secrets redacted (--no-redact keeps them)" in res.output
    outputs.append(res.output)
    redacted = sum(json.loads(out)["metadata"].get("amem_redacted", 0) for out in outputs[:-1])
    assert redacted == len(SECRETS)  # each counted once
    _check(vault, llm, *outputs)


def test_ingest(run, vault, llm):
    lines = [json.dumps({"role": ("user", "assistant")[i % 2], "content": text}) for i, text in enumerate(_chunks(_items()))]
    res = run("ingest", "--wait", "--json", "-", input="\n".join(lines) + "\n")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["redactions"] == len(SECRETS)
    _check(vault, llm, res.output)


def test_import(run, vault, llm, tmp_path):
    items = _items()
    lines = [{"content": text} for text in _chunks(items)]
    # Secrets in the other fields and in metadata are caught too.
    lines.append({"content": "rotated the keys", "keywords": [SECRETS[0][1]], "context": SECRETS[5][2],
                  "metadata": {"env": SECRETS[6][2], SECRETS[7][1]: "as a key"}})
    (tmp_path / "notes.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "ops.md").write_text(f"---\ntags: [ops]\nowner: '{SECRETS[8][2]}'\n---\nThe runbook: {SECRETS[9][2]}\n")
    res = run("import", "--wait", "--json", str(tmp_path / "notes.jsonl"))
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["redactions"] == len(SECRETS) + 4
    res2 = run("import", "--wait", str(folder))
    assert res2.exit_code == 0 and "redacted 2 secrets" in res2.output, res2.output
    _check(vault, llm, res.output, res2.output)


def test_mcp_add_memory(vault, llm):
    from mcp import Client

    from amem_cli.mcp_tools import build
    from amem_cli.server.worker import Turn
    from amem_cli.wire.queue import Process

    facade = facade_on(vault, llm=None)
    server = build(facade, Turn(), threading.Event())
    replies = []

    async def add_all() -> None:
        async with Client(server) as client:
            for text in _chunks(_items()):
                added = await client.call_tool("add_memory", {"content": text, "context": SECRETS[0][2]})
                assert not added.is_error, added.content
                replies.append(json.dumps(added.structured_content))

    try:
        asyncio.run(add_all())
        facade.run(Process())  # the queued model work, as the server's worker does it
    finally:
        facade.close()
    assert sum(json.loads(r)["metadata"]["amem_redacted"] for r in replies) == len(SECRETS) + len(replies)
    _check(vault, llm, *replies)


def test_no_redact_keeps_what_was_given(run, vault, llm, tmp_path):
    kind, key, sentence = SECRETS[0]
    assert run("add", "--no-redact", sentence).exit_code == 0
    (tmp_path / "a.jsonl").write_text(json.dumps({"content": SECRETS[1][2]}) + "\n")
    res = run("import", "--no-redact", "--json", str(tmp_path / "a.jsonl"))
    assert json.loads(res.stdout)["redactions"] == 0
    files = "".join(p.read_text() for p in vault.glob("*.md"))
    assert key in files and SECRETS[1][1] in files and "amem_redacted" not in files
