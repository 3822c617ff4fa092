"""Secrets out of text before it is stored, embedded or shown to a model.

`redact(text)` replaces API keys, tokens, private keys and passwords with
`[REDACTED:kind]` and says how many it replaced. The patterns are specific (a known
prefix and length, or a keyword before the value) so that git SHAs, UUIDs, hex ids and
ordinary words pass unchanged.
"""

from __future__ import annotations

import re
from typing import Any

# The metadata key of a note that says how many secrets were redacted from it when added.
REDACTED = "amem_redacted"

# (kind, pattern, the group to replace: 0 is the whole match). Most specific first: a
# JWT after "Bearer " is counted once, as a JWT.
_PATTERNS: list[tuple[str, re.Pattern, int]] = [
    ("private_key", re.compile(
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----[\s\S]*?-----END \1PRIVATE KEY-----"), 0),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0),
    ("github_token", re.compile(r"\b(?:gh[opsu]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), 0),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-|ant-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"), 0),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), 0),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"), 0),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}"), 0),
    # scheme://user:PASSWORD@host: the user and the host stay.
    ("url_password", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@"), 1),
    ("bearer", re.compile(r"\bBearer\s+((?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{16,}=*)"), 1),
    # password=..., "api_key": "...": a long value that is not code (a call, a variable, a placeholder).
    ("password", re.compile(
        r"(?i)(?<![A-Za-z0-9])(?:password|passwd|pwd|secret|client[_-]?secret|secret[_-]?key|api[_-]?key"
        r"|(?:access|auth|refresh|api)[_-]?token)[\"']?\s*[:=]\s*[\"']?"
        r"(?![A-Za-z_][A-Za-z0-9_]*(?:\(|\.[A-Za-z_]))(?![a-z]+_[a-z_]*(?![A-Za-z0-9]))(?!\[REDACTED)"
        r"([^\s\"',;()\[\]{}$<>]{8,})"), 1),
]


def redact(text: str) -> tuple[str, int]:
    """The text with its secrets replaced by `[REDACTED:kind]`, and how many there were."""
    count = 0
    for kind, pattern, group in _PATTERNS:

        def replace(m: re.Match, kind: str = kind, group: int = group) -> str:
            nonlocal count
            count += 1
            start, end = m.start(group) - m.start(), m.end(group) - m.start()
            whole = m.group(0)
            return whole[:start] + f"[REDACTED:{kind}]" + whole[end:]

        text = pattern.sub(replace, text)
    return text, count


def redact_data(value: Any) -> tuple[Any, int]:
    """`redact` over every string in a JSON-like value (keys too), and the count."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        pairs = [redact_data(v) for v in value]
        return type(value)(v for v, _ in pairs), sum(n for _, n in pairs)
    if isinstance(value, dict):
        out, count = {}, 0
        for key, item in value.items():
            (key, n), (item, m) = redact_data(key), redact_data(item)
            out[key] = item
            count += n + m
        return out, count
    return value, 0
