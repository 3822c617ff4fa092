"""Secret redaction measured on a corpus written from the providers' documented formats.

The corpus (benchmarks/data/secrets.jsonl, made by benchmarks/data/make_secrets.py) holds
secrets in the places people paste them (chat, shell, .env, YAML/TOML/JSON, logs, Markdown,
code) and look-alikes that must pass untouched (UUIDs, git SHAs, hashes, base64 images,
public keys, ARNs, "password" as a word, placeholders, already-redacted values...).
benchmarks/secret_detection.py prints the same figures per kind, with the throughput.

A secret item is caught when none of its values survives redact() (for a multi-line key, no
line of its body either); a look-alike is a false positive when redact() changes it.
Every miss and every false positive is listed below with its reason: a new one, or one that
is fixed, fails the test until the list says so.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from amem_cli.redact import redact

_spec = importlib.util.spec_from_file_location(
    "secrets_benchmark", Path(__file__).parents[2] / "benchmarks" / "secret_detection.py")
bench = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # dataclasses look it up
_spec.loader.exec_module(bench)

ITEMS = bench.load(bench.CORPUS)

# id -> why the detector lets it through. Kept equal to the actual misses.
KNOWN_MISSES: dict[str, str] = {}

# id -> why the detector changes it. Kept equal to the actual false positives.
KNOWN_FALSE_POSITIVES: dict[str, str] = {}


@pytest.fixture(scope="module")
def result():
    return bench.evaluate(ITEMS, redact)


def test_the_corpus_is_as_the_issue_asks():
    secrets = [it for it in ITEMS if it["secrets"]]
    lookalikes = [it for it in ITEMS if not it["secrets"]]
    assert len(secrets) >= 80 and len(lookalikes) >= 40
    assert len({it["id"] for it in ITEMS}) == len(ITEMS)
    for it in secrets:
        assert it["source"], it["id"]
        assert all(value in it["text"] for value in it["secrets"]), it["id"]
    assert all(it["kind"].startswith("lookalike:") for it in lookalikes)
    assert min(Counter(it["kind"] for it in secrets).values()) >= 2, "several examples of each kind"


def test_the_scoring_counts_what_survives():
    """redact() that does nothing catches nothing; one that blanks everything touches every
    look-alike; one that drops only the first line of a PEM block still leaks its body."""
    nothing = bench.evaluate(ITEMS, lambda text: (text, 0))
    assert nothing.recall == 0 and nothing.false_positive_rate == 0
    blank = bench.evaluate(ITEMS, lambda text: ("[REDACTED:all]", 1))
    assert blank.recall == 1 and blank.false_positive_rate == 1
    pem = next(v for it in ITEMS for v in it["secrets"] if v.startswith("-----BEGIN RSA PRIVATE KEY-----"))
    assert bench.survivors(pem, pem.split("\n", 1)[1])


def test_misses_are_exactly_the_known_ones(result):
    new = {i: result.misses[i] for i in result.misses.keys() - KNOWN_MISSES.keys()}
    fixed = sorted(KNOWN_MISSES.keys() - result.misses.keys())
    assert not new and not fixed, f"new misses (what survived): {new}; fixed, remove from KNOWN_MISSES: {fixed}"


def test_false_positives_are_exactly_the_known_ones(result):
    new = {i: result.outputs[i] for i in result.false_positives.keys() - KNOWN_FALSE_POSITIVES.keys()}
    fixed = sorted(KNOWN_FALSE_POSITIVES.keys() - result.false_positives.keys())
    assert not new and not fixed, f"new false positives (output): {new}; fixed, remove from KNOWN_FALSE_POSITIVES: {fixed}"


def test_recall_is_at_least_98_percent(result):
    assert result.recall >= 0.98, f"recall {result.recall:.1%}; missed {sorted(result.misses)}"


def test_false_positives_are_at_most_5_percent(result):
    assert result.false_positive_rate <= 0.05, (
        f"false positives {result.false_positive_rate:.1%}: {sorted(result.false_positives)}")
