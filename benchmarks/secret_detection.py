"""How many secrets amem's redaction catches, how often it touches what is not one, what it costs.

    .venv/bin/python benchmarks/secret_detection.py                          # both corpora below
    .venv/bin/python benchmarks/secret_detection.py --corpus other.jsonl     # another one (repeatable)

Runs `amem_cli.redact.redact` on every item of each corpus and prints, per corpus, what is
below, then one line per corpus: recall and look-alikes altered. The corpora:

- benchmarks/data/secrets.jsonl, written by benchmarks/data/make_secrets.py from the
  providers' documented formats, with the detectors in view (round 1);
- benchmarks/data/secrets_heldout/ (round 3): written blind by someone who had not seen
  the detectors, from providers' documentation and public scanner rules (its README says
  how). Its records hold one `secret` each, its look-alikes are in a file of their own;
  `load` reads both schemas.

For each corpus:

- per secret kind: items, caught, recall; then the overall recall;
- per look-alike kind: items and false positives; then the overall false-positive rate;
- every miss (with what survived) and every false positive, by item id;
- redact() throughput: corpus items/s, and ms per 1,000 ordinary notes (the seeded note
  generator of foundation.py), median of 5 runs.

A secret item is caught when none of its values survives in the output (for a multi-line
key, no line of its body either). A look-alike is a false positive when redact() changes
it at all. tests/security/test_secret_formats.py asserts the same figures.
Figures only; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "data" / "secrets.jsonl"
HELDOUT = HERE / "data" / "secrets_heldout"


def load(path: Path) -> list[dict]:
    """The items of a corpus file, or of every .jsonl file in a folder, each as
    {"id", "kind", "text", "secrets": [...]} (a look-alike: no secrets, kind "lookalike:...")."""
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    items = []
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                items.append(_common(json.loads(line)))
    return items


def _common(item: dict) -> dict:
    """The held-out corpus's schema (`secret`, or none: a look-alike) as this one's."""
    if "secrets" in item:
        return item
    if "secret" in item:
        return {**item, "secrets": [item["secret"]]}
    return {**item, "kind": f"lookalike:{item['kind']}", "secrets": []}


def survivors(value: str, output: str) -> list[str]:
    """The parts of a secret still in the redacted output: the value itself, or any line of a
    multi-line key's body (BEGIN/END markers and 'Name: value' armor headers are not body)."""
    if value in output:
        return [value]
    lines = [line.strip() for line in value.replace("\\n", "\n").splitlines()]
    if len(lines) < 2:
        return []
    return [line for line in lines if line and not line.startswith("-----") and ":" not in line and line in output]


@dataclass
class Result:
    items: list[dict]
    outputs: dict[str, str] = field(default_factory=dict)
    misses: dict[str, list[str]] = field(default_factory=dict)  # id -> what survived
    false_positives: dict[str, str] = field(default_factory=dict)  # id -> the changed text

    @property
    def secret_items(self) -> list[dict]:
        return [it for it in self.items if it["secrets"]]

    @property
    def lookalikes(self) -> list[dict]:
        return [it for it in self.items if not it["secrets"]]

    @property
    def recall(self) -> float:
        return 1 - len(self.misses) / len(self.secret_items) if self.secret_items else float("nan")

    @property
    def false_positive_rate(self) -> float:
        return len(self.false_positives) / len(self.lookalikes) if self.lookalikes else float("nan")


def evaluate(items: list[dict], redact) -> Result:
    result = Result(items)
    for it in items:
        output, _count = redact(it["text"])
        result.outputs[it["id"]] = output
        if it["secrets"]:
            left = [part for value in it["secrets"] for part in survivors(value, output)]
            if left:
                result.misses[it["id"]] = left
        elif output != it["text"]:
            result.false_positives[it["id"]] = output
    return result


def by_kind(items: list[dict], bad: dict[str, object]) -> list[tuple[str, int, int]]:
    """(kind, items, how many of them are in `bad`) for each kind, in corpus order."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for it in items:
        counts[it["kind"]][0] += 1
        counts[it["kind"]][1] += it["id"] in bad
    return [(kind, n, b) for kind, (n, b) in counts.items()]


def short(text: str, width: int = 100) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 3] + "..."


def report(result: Result) -> None:
    print(f"\n{'secret kind':<24} {'items':>5} {'caught':>6} {'recall':>7}")
    for kind, n, missed in by_kind(result.secret_items, result.misses):
        print(f"{kind:<24} {n:>5} {n - missed:>6} {(n - missed) / n:>7.0%}")
    n = len(result.secret_items)
    print(f"{'all secrets':<24} {n:>5} {n - len(result.misses):>6} {result.recall:>7.1%}")

    print(f"\n{'look-alike kind':<28} {'items':>5} {'false positives':>15}")
    for kind, n, fp in by_kind(result.lookalikes, result.false_positives):
        print(f"{kind:<28} {n:>5} {fp:>15}")
    n = len(result.lookalikes)
    print(f"{'all look-alikes':<28} {n:>5} {len(result.false_positives):>15}"
          f"   false-positive rate {result.false_positive_rate:.1%}")

    print(f"\nmisses ({len(result.misses)}):")
    for item_id, left in result.misses.items():
        print(f"  {item_id}: survived {short(left[0], 60)!r}" + (f" (+{len(left) - 1} more)" if len(left) > 1 else ""))
    print(f"\nfalse positives ({len(result.false_positives)}):")
    for item_id, output in result.false_positives.items():
        print(f"  {item_id}: {short(output)!r}")


def throughput(redact, texts: list[str], runs: int = 5) -> float:
    """Median seconds for one redact() pass over all texts."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for text in texts:
            redact(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, action="append",
                        help=f"a JSONL corpus or a folder of them (repeatable; default: {CORPUS} and {HELDOUT})")
    parser.add_argument("--notes", type=int, default=1000, help="ordinary notes for the throughput figure")
    args = parser.parse_args()

    from amem_cli.redact import redact  # noqa: E402
    from foundation import make_notes  # noqa: E402

    results = {}
    for corpus in args.corpus or [CORPUS, HELDOUT]:
        try:
            items = load(corpus)
        except (OSError, json.JSONDecodeError, KeyError) as e:
            parser.error(f"cannot read the corpus {corpus}: {e}")
        print(f"\n== corpus {corpus}: {sum(1 for it in items if it['secrets'])} secret items, "
              f"{sum(1 for it in items if not it['secrets'])} look-alikes")
        results[corpus] = evaluate(items, redact)
        report(results[corpus])
    print()
    for corpus, result in results.items():
        print(f"{str(corpus):<60} recall {result.recall:6.1%} ({len(result.secret_items) - len(result.misses)}"
              f"/{len(result.secret_items)}); look-alikes altered {result.false_positive_rate:5.1%} "
              f"({len(result.false_positives)}/{len(result.lookalikes)})")

    items = next(iter(results.values())).items
    texts = [it["text"] for it in items]
    notes = [n["content"] for n in make_notes(args.notes)]
    corpus_s = throughput(redact, texts)
    notes_s = throughput(redact, notes)
    print(f"\nredact() on the corpus: {len(texts) / corpus_s:,.0f} items/s "
          f"({sum(map(len, texts)) / corpus_s / 1e6:.2f} MB/s)")
    print(f"redact() on {args.notes:,} ordinary notes: {notes_s * 1000 / args.notes * 1000:.1f} ms per 1,000 notes "
          f"({args.notes / notes_s:,.0f} notes/s), median of 5")


if __name__ == "__main__":
    main()
