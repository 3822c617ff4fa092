"""Filler in `amem ingest`: how many of the notes a transcript makes are filler, and how
well amem tells filler, against the labelled transcripts of the judged set.

    python benchmarks/filler.py [--show]

benchmarks/data/judged/transcripts/ holds 8 conversations (197 messages), each message
labelled blind: `filler` (no content of its own worth keeping as a memory) and, for
filler, the neighbour it belongs with (`attach`: previous or next). Each transcript is
split as `amem ingest` splits it (`transcripts.read`, `transcripts.split`). A message is
taken as filler by amem when it is not a note of its own: dropped, or kept with another
message's note. Printed:
- the notes, and the filler share: notes whose own message is labelled filler;
- amem's filler decision against the labels: precision, recall, each with a 95 % Wilson
  interval, and the messages it got wrong (`--show`);
- where a chunk says which messages it holds (`Chunk.messages`): of the filler amem kept
  with a neighbour, how many with the one the label names.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "judged" / "transcripts"


def wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    z, p = 1.96, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print the messages amem got wrong")
    args = parser.parse_args()
    from amem_cli.transcripts import read, split

    labels: dict[str, dict[int, dict]] = {}
    for line in (DATA / "labels.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        labels.setdefault(row["file"], {})[row["line"]] = row
    notes = filler_notes = tp = fp = fn = attached = attached_right = 0
    wrong = []
    for name, by_line in sorted(labels.items()):
        messages = read((DATA / name).read_text(encoding="utf-8")).messages
        chunks = split(messages, name)
        own = {int(c.source.split("#")[1].split(".")[0]) for c in chunks}
        notes += len(chunks)
        filler_notes += sum(by_line[i]["filler"] for i in own)
        held = {i: c for c in chunks for i in getattr(c, "messages", ())}
        for m in messages:
            label, amem = by_line[m.index], m.index not in own
            tp += label["filler"] and amem
            fp += amem and not label["filler"]
            fn += label["filler"] and not amem
            if label["filler"] != amem:
                wrong.append((name, m.index, label["filler"], m.text[:90]))
            if label["filler"] and amem and m.index in held:
                attached += 1
                main_index = int(held[m.index].source.split("#")[1].split(".")[0])
                attached_right += (main_index < m.index) == (label["attach"] == "previous")
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    print(f"{len(labels)} transcripts, {sum(map(len, labels.values()))} messages, "
          f"{sum(r['filler'] for b in labels.values() for r in b.values())} labelled filler")
    print(f"notes {notes}, filler notes {filler_notes} ({filler_notes / max(notes, 1):.1%})")
    low, high = wilson(tp, tp + fp)
    print(f"filler decision: precision {precision:.3f} [{low:.3f}, {high:.3f}] ({tp} of {tp + fp})", end=", ")
    low, high = wilson(tp, tp + fn)
    print(f"recall {recall:.3f} [{low:.3f}, {high:.3f}] ({tp} of {tp + fn})")
    if attached:
        print(f"filler kept with a neighbour: {attached}, with the one the label names: {attached_right}")
    if args.show:
        for name, index, label, text in wrong:
            print(f"  {'missed' if label else 'wrongly'}: {name}#{index} {text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
