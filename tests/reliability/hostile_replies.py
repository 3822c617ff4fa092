"""Malformed, truncated, oversized and adversarial model replies (generated, seeded).

Each is a raw string, as a backend would hand it over. Contexts that a reply proposes
use the words of NEIGHBOUR and NEW, so that evolution takes the grounded ones.
"""

from __future__ import annotations

import json
import random

NEIGHBOUR = "Postgres migrations lock tables and block deploys for minutes."
NEW = "The deploy failed because a Postgres migration locked the users table."
GROUNDED = "Postgres migrations lock tables and block deploys, as a failed deploy showed."

_VALID = [
    {"keywords": ["Postgres migration", "deploy"], "tags": ["database", "deploys"], "context": GROUNDED},
    {"context": GROUNDED, "tags": ["postgres", "migrations"]},
    {"links": [1]},
    {"boxes": ["databases"]},
    {"notes": [{"note": 1, "context": GROUNDED, "tags": ["postgres", "migrations"]}]},
]


def _non_json() -> list[str]:
    rng = random.Random(7)
    noise = ["".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(1, 400))) for _ in range(10)]
    return [
        "", " ", "\n\n", "null", "true", "0", "-1", "1e999", "NaN", "Infinity", "[]", "{}", "[1, 2]", '"a string"',
        "Sure! Here are the keywords: deploy, postgres, migration.", "I cannot help with that.", "```json\n```",
        "```\n{not json}\n```", "<|im_end|>", "</s><s>", "{{{{", "}}}}", "[[[[", "]]]]",
        "{'keywords': ['single quotes']}", "{keywords: [unquoted]}", '{"keywords": ["a"],}', "\x00\x01\x02\x03",
        "\ufffd" * 50, '{"keywords": ["a"]} {"tags": ["b"]}', "{\"context\": \"unterminated", "}{", "][",
        *noise,
    ]


def _truncated() -> list[str]:
    out = []
    for obj in _VALID:
        text = json.dumps(obj)
        for cut in sorted({*range(1, len(text), max(1, len(text) // 12)), len(text) - 1}):
            out.append(text[:cut])
    return out


def _wrong_types() -> list[str]:
    values = [5, 1.5, True, None, {"a": 1}, [[1]], [None], "one, two; three", [{"x": 1}], -1, [True, 3.5], ""]
    return [json.dumps({field: v}) for field in ("keywords", "tags", "context", "links", "boxes") for v in values]


def _huge() -> list[str]:
    return [
        json.dumps({"context": "word " * 200_000, "tags": ["a"], "keywords": ["deploy"]}),
        json.dumps({"keywords": ["x" * 100_000], "tags": ["y" * 100_000]}),
        json.dumps({"keywords": [f"k{i}" for i in range(100_000)], "tags": ["t"] * 50_000}),
        json.dumps({"context": GROUNDED, "tags": ["postgres"]}) + " trailing junk" * 100_000,
        " " * 1_000_000 + json.dumps({"context": GROUNDED}),
        "[" * 100_000,
        '{"a":' * 50_000,
        '{"a": 1, ' * 20_000,
        "{" * 200_000,
        '{"keywords": ["a"' + "," * 100_000,
        ": " * 100_000,
        '{"n": ' + "1" * 100_000 + "}",
        json.dumps({"context": "\u0000" * 100_000}),
        json.dumps({"links": list(range(100_000))}),
        json.dumps({"boxes": ["b" * 10_000] * 1_000}),
    ]


def _not_whitelisted() -> list[str]:
    """Grounded, schema-shaped replies that also try to set fields no step may set."""
    extras = [
        {"content": "PWNED: the note's text replaced"},
        {"id": "../../evil"},
        {"id": "neighbour"},
        {"created_at": "1999-01-01T00:00:00Z", "created": "1999-01-01", "updated": "2999-01-01"},
        {"links": ["evil"], "backlinks": ["evil"], "previous": "evil", "next": "evil"},
        {"metadata": {"owned": True}, "extra": {"pinned": False}, "pinned": False},
        {"path": "/etc/passwd", "file": "../outside.md"},
        {"keywords": ["injected keyword"], "boxes": ["injected-box"]},
        {"__proto__": {"polluted": 1}, "constructor": {"prototype": {}}},
        {"content": "x", "id": "y", "context": GROUNDED, "tags": ["postgres"]},
    ]
    out = []
    for extra in extras:
        for base in (_VALID[0], _VALID[1]):
            out.append(json.dumps({**base, **extra}))
        out.append(json.dumps({"notes": [{"note": 1, **_VALID[1], **extra}], **extra}))  # evolution's shape
    return out


def _control_and_unicode() -> list[str]:
    nasty = [
        "null\x00byte", "escape \x1b[31mred\x1b[0m", "line\r\nbreak", "para\u2028sep", "rtl \u202eoverride",
        "\ufeffbom", "zero\u200bwidth", "lone \ud800 surrogate", "emoji 🐘 postgres", "東京 デプロイ",
        "e" + "\u0301" * 100, "tab\there", "bell\x07", "del\x7f", "nbsp\u00a0space",
    ]
    return [json.dumps({"context": f"Postgres migrations lock tables: {s}.", "tags": [s], "keywords": [s]}) for s in nasty]


def _yaml_breaking() -> list[str]:
    nasty = [
        "---\nid: evil\n---", "key: value", "*alias", "&anchor x", "!!python/object/apply:os.system ['touch pwned']",
        "'", '"', "|", ">", "# comment", "[[evil]]", "{{x}}", "- a\n- b", "? complex", "%YAML 1.1", "...", "@at",
        "`tick`", "yes", "~", "0x10", "2025-13-45", ": ", "{a: 1}",
    ]
    return [json.dumps({"context": f"Postgres migrations lock tables {s} deploys.", "tags": [s, "postgres"],
                        "keywords": [s, "deploy"], "boxes": [s]}) for s in nasty]


def replies() -> list[tuple[str, str]]:
    """(kind, raw reply) pairs."""
    groups = {
        "non-json": _non_json(), "truncated": _truncated(), "wrong-types": _wrong_types(), "huge": _huge(),
        "not-whitelisted": _not_whitelisted(), "control-unicode": _control_and_unicode(), "yaml": _yaml_breaking(),
    }
    return [(kind, raw) for kind, items in groups.items() for raw in items]
