"""The fields amem writes for the judged set's notes, and how they compare with a person's.

    python benchmarks/judged_fields.py --method det-new --llm none
    python benchmarks/judged_fields.py --method smollm2 --llm default --fields keywords,tags,context --threads 1
    python benchmarks/judged_fields.py --method qwen --model models/qwen...gguf --fields keywords,tags,context --threads 1

`--replies FILE` keeps each of the model's replies by its prompt (one JSON line each, written
as it comes): run again after a change to amem's deterministic fields, the model answers
only prompts it has not seen (the construction prompt holds only the note's text), so the
candidates follow the code and not the hours a model run takes.

The 183 notes of benchmarks/data/judged/judged_notes.jsonl (written blind, each with a
person's keywords, tags, topic and context) are added one by one, oldest first, into one
fresh vault through `AgentMemory.add` (the model's work done before the next add). Each
note's fields as stored at the end go to `benchmarks/judging/candidates/METHOD.jsonl`, for
`fields_judge.py make-packets`. Printed, measured here apart from amem's own checks:
- keywords and tags that are not words of the note (made up), per note and in all;
- agreement with the person's keywords (a keyword matches when one holds the other, case aside);
- boxes, as the notes were added and after `amem boxes --rebuild`: the share of notes in
  boxes of 3 or more (not the inbox), purity against the person's topics (a note counts for
  its topic or `topic_also`), the biggest box's share, the boxes named by a stop word or a
  file extension, and all the boxes' names (to look for verbs);
- contexts equal to the note's first sentence, and empty ones;
- contexts that tell a kind ("A decision, ..."), and those whose kind the person's tags or
  context name too (a kind the person does not name is likely false).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).parent
SET = HERE / "data" / "judged" / "judged_notes.jsonl"
STOP = set("a an the and or of to in on it is this that with for yes no ok".split())
EXTENSIONS = set("py md txt json yaml yml toml csv log png jpg jpeg pdf html sh sql js ts go rs".split())


def tokens(text: str) -> list[str]:
    return re.findall(r"[\w.'/-]+", text.casefold())


def made_up(value: str, text: str) -> bool:
    """No token of `value` (plural aside) is in the note."""
    words = set(re.findall(r"\w+", text.casefold()))
    for w in re.findall(r"\w+", value.casefold()):
        if not ({w, w + "s", w + "es", w.rstrip("s")} & words) and not any(x.startswith(w[:5]) for x in words if len(w) >= 5):
            return True
    return False


def first_sentence(text: str) -> str:
    body = re.sub(r"^[A-Za-z]+: ", "", text.strip())
    return re.split(r"(?<=[.!?])\s", body)[0].strip()


def box_figures(boxes: list[list[str]], gold: list[set[str]]) -> dict:
    sizes = Counter(b for bs in boxes for b in bs)
    in_big = [any(sizes[b] >= 3 and b != "inbox" for b in bs) for bs in boxes]
    members: dict[str, list[int]] = {}
    for i, bs in enumerate(boxes):
        for b in bs:
            if sizes[b] >= 3 and b != "inbox":
                members.setdefault(b, []).append(i)
    total = sum(len(m) for m in members.values())
    pure = sum(max(Counter(t for i in m for t in gold[i]).values()) for m in members.values())
    named_badly = sorted(b for b in sizes if b.casefold() in STOP or b.casefold() in EXTENSIONS)
    topics = Counter({b: n for b, n in sizes.items() if b != "inbox"})
    return {"boxes": len(sizes), "in boxes of 3+": sum(in_big) / len(boxes), "purity": pure / total if total else 0.0,
            "biggest": max(topics.values()) / len(boxes) if topics else 0.0, "biggest box": topics.most_common(1),
            "inbox": sizes["inbox"] / len(boxes), "named by a stop word or extension": named_badly,
            "names": ", ".join(f"{b} {n}" for b, n in sizes.most_common())}


class KeptReplies:
    """An LLM whose replies are kept in a file by prompt, and given again from there."""

    def __init__(self, llm, path: Path):
        self.llm, self.path = llm, path
        self.replies: dict[str, str | None] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.replies[row["prompt"]] = row["reply"]

    @property
    def identity(self) -> str:
        return self.llm.identity

    def complete_json(self, messages, schema, *, max_tokens: int):
        import hashlib

        prompt = hashlib.sha256(json.dumps([messages, schema, max_tokens], sort_keys=True).encode()).hexdigest()
        if prompt not in self.replies:
            self.replies[prompt] = self.llm.complete_json(messages, schema, max_tokens=max_tokens)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"prompt": prompt, "reply": self.replies[prompt]}, ensure_ascii=False) + "\n")
        return self.replies[prompt]

    def close(self) -> None:
        self.llm.close()


def run(args) -> dict:
    from amem_cli import AgentMemory
    from amem_cli.llm import make_llm

    notes = sorted((json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()),
                   key=lambda n: n["created"])
    llm = "none" if args.llm == "none" and not args.model else make_llm("llama", model_path=args.model, threads=args.threads)
    if args.replies and llm != "none":
        llm = KeptReplies(llm, args.replies)
    options = {"model_fields": args.fields} if args.fields else {}
    rows = []
    with tempfile.TemporaryDirectory(prefix="amem-judged-") as tmp, AgentMemory(tmp, llm=llm, **options) as mem:
        ids = {n["id"]: mem.add(n["text"], created_at=n["created"]).id for n in notes}
        for n in notes:
            note = mem.get(ids[n["id"]])
            rows.append({"id": n["id"], "text": n["text"], "created": n["created"], "method": args.method,
                         "keywords": note.keywords, "tags": note.tags, "context": note.context, "boxes": note.boxes})
        mem.rebuild_boxes()
        rebuilt = [mem.get(ids[r["id"]]).boxes for r in rows]
    out = HERE / "judging" / "candidates" / f"{args.method}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    person = {n["id"]: n for n in notes}
    kw_hits = kw_total = person_total = 0
    for r in rows:
        mine = [k.casefold() for k in person[r["id"]]["keywords"]]
        kw_total += len(r["keywords"])
        person_total += len(mine)
        kw_hits += sum(any(k.casefold() in m or m in k.casefold() for m in mine) for k in r["keywords"])
    made = [(r["id"], v) for r in rows for v in r["keywords"] + r["tags"] if made_up(v, r["text"])]
    topics = [{person[r["id"]]["topic"], person[r["id"]].get("topic_also", person[r["id"]]["topic"])} for r in rows]
    return {
        "method": args.method, "notes": len(rows), "candidates": str(out),
        "made-up keywords and tags": len(made), "notes with one": len({i for i, _ in made}), "examples": made[:8],
        "keywords agreeing with the person's": kw_hits / kw_total if kw_total else 0.0,
        "keywords per note": kw_total / len(rows),
        "boxes": box_figures([r["boxes"] for r in rows], topics),
        "boxes after amem boxes --rebuild": box_figures(rebuilt, topics),
        "contexts equal to the first sentence": sum(r["context"].strip().casefold() == first_sentence(r["text"]).casefold() for r in rows),
        "empty contexts": sum(not r["context"] for r in rows),
        **kind_figures(rows, person),
    }


def kind_figures(rows: list[dict], person: dict[str, dict]) -> dict:
    """The contexts that tell a kind ("A decision, February 2024."), and how many of those
    kinds the person's tags or context name ("decision")."""
    from amem_cli.steps.construct import KINDS

    kinds = [name.split()[-1] for name, _ in KINDS] + ["question"]
    told = [(r, m.group(1)) for r in rows if (m := re.match(rf"An? ({'|'.join(kinds)})\b", r["context"]))]
    agreed = [r["id"] for r, kind in told
              if kind.casefold() in " ".join([*person[r["id"]]["tags"], person[r["id"]]["context"]]).casefold()]
    return {"contexts telling a kind": len(told), "kinds the person names too": len(agreed)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--method", required=True, help="the candidates' name (judging/candidates/METHOD.jsonl)")
    parser.add_argument("--llm", choices=("none", "default"), default="none")
    parser.add_argument("--model", type=Path, help="a GGUF file instead of the bundled model")
    parser.add_argument("--fields", help="amem's model_fields (default: amem's default)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--replies", type=Path, help="keep the model's replies here by prompt, and use those kept")
    args = parser.parse_args()
    print(json.dumps(run(args), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
