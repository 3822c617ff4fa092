"""Redaction on a corpus of realistic secrets (none may survive) and decoys (<= 1% touched)."""

from __future__ import annotations

from amem_cli.redact import redact
from secret_corpus import decoys as _decoys
from secret_corpus import secrets as _secrets


def test_no_secret_survives_and_each_is_counted():
    secrets = _secrets()
    left = []
    for kind, value, sentence in secrets:
        text, n = redact(sentence)
        if value in text or n != 1 or f"[REDACTED:{kind}]" not in text:
            left.append((kind, sentence, text, n))
    print(f"secrets: {len(secrets)}, left or miscounted: {len(left)}")
    assert not left


def test_decoys_survive():
    decoys = _decoys()
    changed = [d for d in decoys if redact(d) != (d, 0)]
    print(f"decoys: {len(decoys)}, changed: {len(changed)}")
    assert len(changed) <= len(decoys) // 100, changed[:5]


def test_url_password_keeps_user_and_host():
    text, n = redact("mysql://root:s3cr3t-pass@10.0.0.2/db")
    assert (text, n) == ("mysql://root:[REDACTED:url_password]@10.0.0.2/db", 1)


def test_bearer_jwt_counts_once():
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abcdefghijk123"
    text, n = redact(f"Authorization: Bearer {jwt}")
    assert (text, n) == ("Authorization: Bearer [REDACTED:jwt]", 1)
