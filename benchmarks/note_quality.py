"""Note quality: are the fields the A-MEM pipeline writes ones a person would trust?

    python benchmarks/note_quality.py --data ../shared/data/locomo-dev.json --llm none
    python benchmarks/note_quality.py --data ../shared/data/locomo-dev.json --llm default --threads 1
    python benchmarks/note_quality.py --data ../shared/data/locomo-dev.json --model PATH.gguf

One table per run (per model). Each model-written context is set against the
deterministic one (`construct(..., llm=None)`: the note's first sentence) on the same note.

- Agreement with an outside reference: LoCoMo's `observation` facts, written by GPT-4 per
  session and speaker with the turns (dia_ids) they come from. `--turns` turns that have
  observations are sampled (seeded) from all conversations; each is built into a note as
  amem builds it ("Speaker: text", one note per turn, as benchmarks/locomo.py adds them;
  the pipeline's `build`, no vault write) and its context is compared with the turn's
  observations: token F1 and embedding cosine (amem's embedder). Model minus
  deterministic: mean and a paired bootstrap 95% interval over turns.
- The work set, benchmarks/data/work_notes.jsonl: hand-written notes, each with the boxes
  a person would file it under and the facts a good context keeps. Added one by one
  through `AgentMemory.add` into a temporary vault (links and evolution included).
- Faithfulness: share of contexts and of tags that add a name, number, date or negation
  the note does not hold, or (contexts) drop a negation or a reason it holds; for
  evolution, against the evolved note's own text. Words tell: a number or date word
  the note lacks, a capitalised word inside a sentence the note lacks (names: contexts
  only, tags are lowercased), more negations, none where the note has one, no reason word
  ("because", "so", "due to"...) where the note has one. Written here, apart from any
  check in amem: a measure must not be the code under test.
- Junk: share of tags and boxes that are digits, dates, file names, URLs, hash-like
  strings, role names or one note's possessive phrase; distinct boxes per 100 notes; box
  purity against the work set's labels, and the biggest box's share of the notes.
- Evolution: the work set, then `--chain` turns of the first conversation (near each
  other, so they link) added in order; share of evolved contexts nearer (token F1,
  cosine) to the new note's text than to their own note's; share of evolution replies
  the pipeline rejected.
- Seconds and model calls per note (p50 and mean), threads; `--show N` notes printed whole.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from locomo import evidence_of, paired_interval, turns_of  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402

WORK_SET = Path(__file__).parent / "data" / "work_notes.jsonl"
# 80 turns: the bundled model builds one in ~4 s on 1 thread of this 2-core machine,
# so the whole run (the work set too) takes about ten minutes.
DEFAULT_TURNS = 80
SEED = 21

# -- tokens ------------------------------------------------------------------------------

NEGATIONS = frozenset("not no never none nobody nothing neither nor cannot without".split())
REASONS = ("because", "since", "due to", "caused by", "so that", "so", "therefore", "thus", "hence",
           "as a result", "in order to", "to avoid")
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve".split()) if w != "_"}
NUMBER_WORDS.update({"twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100"})
MONTHS = "january february march april may june july august september october november december".split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
# Abbreviations that are no English word ("Mar", "Sat", "Sun", "Wed" are; "may" too).
SHORT_DATES = {"jan": "january", "feb": "february", "apr": "april", "jun": "june", "jul": "july", "aug": "august",
               "sep": "september", "sept": "september", "oct": "october", "nov": "november", "dec": "december",
               "mon": "monday", "tue": "tuesday", "tues": "tuesday", "thu": "thursday", "thurs": "thursday", "fri": "friday"}
DAY_WORDS = frozenset("today tomorrow yesterday tonight".split())
ARTICLES = frozenset({"a", "an", "the"})


def norm_tokens(text: str) -> list[str]:
    """Lowercased words and numbers for overlap: "n't" and negation words become "not",
    number words digits, a plural or possessive its stem ("Fridays" -> "friday")."""
    text = re.sub(r"n['’]t\b", " not", text.casefold()).replace("cannot", "can not")
    out = []
    for tok in re.findall(r"\d+(?:[.:]\d+)*|[^\W\d_]+", text):
        tok = "not" if tok in NEGATIONS else NUMBER_WORDS.get(tok, tok)
        if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss"):
            tok = tok[:-1]
        out.append(tok)
    return out


def token_f1(candidate: str, reference: str) -> float:
    """SQuAD-style token F1 (articles left out)."""
    a = Counter(t for t in norm_tokens(candidate) if t not in ARTICLES)
    b = Counter(t for t in norm_tokens(reference) if t not in ARTICLES)
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def fact_kept(fact: str, text: str) -> bool:
    """All of the fact's words (negation and number words normalised) are in `text`."""
    return set(norm_tokens(fact)) <= set(norm_tokens(text))


# -- faithfulness ------------------------------------------------------------------------


def _numbers(text: str) -> set[str]:
    """Numbers standing alone ("4.2", "10:00", "1,000", "three"), not inside a name ("m5")."""
    found = {n.replace(",", "") for n in re.findall(r"(?<!\w)\d+(?:[.,:]\d+)*(?!\w)", text)}
    return found | {NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.casefold()) if w in NUMBER_WORDS}


def _dates(text: str) -> set[str]:
    """Month and weekday names ("Fridays", "Sep"), "today" and the like, quarters ("Q3")."""
    out = set()
    for w in re.findall(r"[a-z]+", text.casefold()):
        w = w[:-1] if w.endswith("s") and w[:-1] in WEEKDAYS else SHORT_DATES.get(w, w)
        if w in DAY_WORDS or w in WEEKDAYS or (w in MONTHS and w != "may"):
            out.add(w)
    return out | {q.lower() for q in re.findall(r"\bQ[1-4]\b", text)}


def _names(text: str) -> set[str]:
    """Capitalised words not opening a sentence (nor "I"): names, as far as the case tells."""
    out = set()
    for m in re.finditer(r"[^\W\d_][\w'’.-]*", text):
        word = re.sub(r"['’]s$", "", m.group().rstrip(".-'’"))
        before = text[: m.start()].rstrip(" \"'“(")
        opens = not before or before[-1] in ".!?:;[\n"
        if word[:1].isupper() and not opens and word != "I":
            out.add(word.casefold())
    return out


def _negations(text: str) -> int:
    return sum(1 for t in norm_tokens(text) if t == "not")


def _has_reason(text: str) -> bool:
    low = " ".join(re.findall(r"[a-z]+", text.casefold()))
    return any(re.search(rf"\b{marker}\b", low) for marker in REASONS)


def unfaithful(generated: str, source: str, *, summary: bool = True) -> list[str]:
    """What `generated` (a context, or a tag with `summary=False`) says that `source` does
    not: an added name, number, date or negation; for a summary also a negation or a
    reason of the source that it drops. Empty: faithful, as far as these words tell."""
    problems = []
    source_words = set(re.findall(r"\w+", source.casefold())) | {re.sub(r"['’]s$", "", w) for w in source.casefold().split()}
    names = _names(generated) if summary else set()
    problems += [f"adds name {n!r}" for n in sorted(names - source_words - set(WEEKDAYS) - set(MONTHS))]
    problems += [f"adds number {n}" for n in sorted(_numbers(generated) - _numbers(source))]
    problems += [f"adds date {d}" for d in sorted(_dates(generated) - _dates(source))]
    if _negations(generated) > _negations(source):
        problems.append("adds a negation")
    if summary and _negations(source) and not _negations(generated):
        problems.append("drops the negation")
    if summary and _has_reason(source) and not _has_reason(generated):
        problems.append("drops the reason")
    return problems


# -- junk labels -------------------------------------------------------------------------

ROLES = frozenset("user users assistant assistants system human bot speaker".split())
FILE_EXTENSIONS = ("txt py pyc md json yaml yml toml csv log php html htm sh cfg ini conf lock sql xml gz zip tar "
                   "dump exe dll rb go java cpp ts jsx tsx png jpg jpeg pdf").split()


def junk_kind(label: str) -> str | None:
    """Why a tag or box name is no topic, or None: a role name, one note's possessive
    phrase, a date, a URL, a file name or path, a hash-like string, or digits."""
    low = label.strip().casefold()
    slug = re.sub(r"[^\w]+", "-", low).strip("-")
    parts = [p for p in re.split(r"[-_./\\ ]+", low) if p]
    if slug in ROLES:
        return "role"
    if re.search(r"\w['’]s\b", low) or re.search(r"[^\W\d_]-s-[^\W\d_]", slug):
        return "possessive"
    if re.search(r"\d{4}-\d{1,2}|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}", low) or any(
            p in MONTHS or p in WEEKDAYS for p in parts):
        return "date"
    if "://" in low or "www." in low or re.search(r"[?=]", low) or re.search(
            r"\w\.(com|org|net|io|dev|ai|co|uk|de|edu|gov)\b", low):
        return "url"
    if re.search(r"\w{3,}/\w{3,}|^[.~]?/|\\", low) or re.search(rf"\w\.({'|'.join(FILE_EXTENSIONS)})$", low):
        return "file"
    if any(len(p) >= 8 and re.search(r"\d", p) and re.search(r"[^\W\d_]", p) or len(p) >= 20 for p in parts):
        return "hash"
    if re.search(r"\d{4,}", low) or not re.search(r"[^\W\d_]", low):
        return "digits"
    return None


def box_purity(assigned: list[list[str]], gold: list[list[str]]) -> float:
    """Cluster purity with several labels a note: for each box, the notes in it that share
    its commonest gold label, summed over boxes, over all box memberships."""
    members: dict[str, list[int]] = {}
    for i, boxes in enumerate(assigned):
        for box in boxes:
            members.setdefault(box, []).append(i)
    total = sum(len(m) for m in members.values())
    if not total:
        return 0.0
    best = sum(max(Counter(label for i in m for label in gold[i]).values()) for m in members.values())
    return best / total


# -- the run -----------------------------------------------------------------------------


def share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def observations_by_turn(sample: dict, known: set[str]) -> dict[str, list[str]]:
    """The sample's observation facts, by the turn (dia_id) each comes from."""
    by_turn: dict[str, list[str]] = {}
    for speakers in sample.get("observation", {}).values():
        for facts in speakers.values():
            for text, ids in facts:
                ids = ids if isinstance(ids, list) else str(ids).split(",")
                for dia_id in evidence_of({"evidence": ids}, known):
                    by_turn.setdefault(dia_id, []).append(text)
    return by_turn


def sample_turns(data: list[dict], n: int) -> list[dict]:
    """`n` turns that have observations, drawn (seeded) from all conversations."""
    pool = []
    for sample in data:
        turns = turns_of(sample["conversation"])
        refs = observations_by_turn(sample, {t["dia_id"] for t in turns})
        pool += [{**t, "sample_id": sample["sample_id"], "reference": " ".join(refs[t["dia_id"]])}
                 for t in turns if t["dia_id"] in refs]
    return random.Random(SEED).sample(pool, min(n, len(pool)))


@contextlib.contextmanager
def watching_evolution():
    """The decision on each linked note the model was asked about, recorded as the pipeline
    goes (an observer: the pipeline's code runs unchanged). Yields None when the pipeline
    has no such step. Works with amem's one call for all linked notes (`decide_evolutions`)
    and with its older one call per linked note (`decide_evolution`)."""
    import amem_cli.services.pipeline as module

    name = next((n for n in ("decide_evolutions", "decide_evolution") if hasattr(module, n)), None)
    if name is None:
        yield None
        return
    decide = getattr(module, name)
    seen: list = []

    def recorded(*args, **kwargs):
        result = decide(*args, **kwargs)
        if result.llm_calls:  # the model was asked: one decision per linked note
            seen.extend(getattr(result, "decisions", [result]))
        return result

    setattr(module, name, recorded)
    try:
        yield seen
    finally:
        setattr(module, name, decide)


def timed(memory, work) -> tuple[float, int]:
    """Seconds and model calls that `work()` took."""
    stats = services(memory).notes.pipeline.stats
    calls, start = stats.llm_calls, time.perf_counter()
    work()
    return time.perf_counter() - start, stats.llm_calls - calls


def run(args) -> dict:
    from amem_cli import AgentMemory, NoteBuilder
    from amem_cli.config import MEASURED_MODEL_FIELDS
    from amem_cli.llm import make_llm
    from amem_cli.steps import construct

    llm = "none" if args.llm == "none" and not args.model else make_llm("llama", model_path=args.model, threads=args.threads)
    work_set = [json.loads(line) for line in WORK_SET.read_text(encoding="utf-8").splitlines() if line.strip()]
    data = json.loads(args.data.read_text(encoding="utf-8"))
    turns = sample_turns(data, args.turns)
    chain = turns_of(data[0]["conversation"])[: args.chain]
    # amem's default for a model (a model object given to AgentMemory writes every field).
    fields = args.fields or ",".join(MEASURED_MODEL_FIELDS)
    with tempfile.TemporaryDirectory(prefix="amem-quality-") as tmp, \
            AgentMemory(tmp, llm=llm, embedder=args.embedder, model_fields=fields) as memory:
        embedder, pipeline = services(memory).embedder, services(memory).notes.pipeline
        pipeline.construct([NoteBuilder().build("warm-up: load the models before timing")], boxes={})

        # The work set, one add at a time, as a person or an agent adds notes.
        added, seconds, calls = [], [], []
        with watching_evolution() as decisions:
            for item in work_set:
                s, c = timed(memory, lambda: added.append(memory.add(item["text"], metadata={"work_id": item["id"]})))
                seconds.append(s)
                calls.append(c)
            # A conversation's turns are near each other: links, and so evolution, happen.
            talk = [memory.add(t["text"], created_at=t["date"]) for t in chain]
        texts = {n.id: n.content for n in added + talk}
        work = [{"kind": "work set " + item["id"], "text": item["text"], "facts": item["facts"], "labels": item["boxes"],
                 "keywords": note.keywords, "tags": note.tags, "boxes": note.boxes, "context": note.context,
                 "deterministic": construct(item["text"], llm=None, embedder=embedder).context,
                 "evolved": evolutions(memory, note.id, texts)}
                for item, note in zip(work_set, added)]

        # LoCoMo turns, each built as amem builds a new note (no write: no links, no evolution).
        built, turn_seconds, turn_calls, boxes = [], [], [], {}
        for t in turns:
            note = NoteBuilder().build(t["text"])
            s, c = timed(memory, lambda: pipeline.construct([note], boxes=boxes))
            turn_seconds.append(s)
            turn_calls.append(c)
            built.append({"kind": "LoCoMo " + t["sample_id"] + " " + t["dia_id"], "text": t["text"], "reference": t["reference"],
                          "keywords": note.keywords, "tags": note.tags, "boxes": note.boxes, "context": note.context,
                          "deterministic": construct(t["text"], llm=None, embedder=embedder).context})

        def cosines(pairs: list[tuple[str, str]]) -> list[float]:
            import numpy as np

            flat = [x for pair in pairs for x in pair]
            if not flat:
                return []
            vectors = np.asarray(embedder.embed(flat), dtype=float)
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            return [float(vectors[2 * i] @ vectors[2 * i + 1]) for i in range(len(pairs))]

        for b in built:
            b["f1"], b["f1_det"] = token_f1(b["context"], b["reference"]), token_f1(b["deterministic"], b["reference"])
        for b, cos, cos_det in zip(built, cosines([(b["context"], b["reference"]) for b in built]),
                                   cosines([(b["deterministic"], b["reference"]) for b in built])):
            b["cos"], b["cos_det"] = cos, cos_det

        revisions = [{"own": n.content, **e} for n in added + talk for e in evolutions(memory, n.id, texts)]
        evolved = [e for e in revisions if e["context"]]
        for e, new, own in zip(evolved, cosines([(e["context"], e["new note"]) for e in evolved]),
                               cosines([(e["context"], e["own"]) for e in evolved])):
            e["nearer by cosine"] = new > own
        identity = services(memory).llm.identity if services(memory).llm is not None else "none"
        threads = getattr(services(memory).llm, "threads", None)

    args.fields = ",".join(sorted(services(memory).notes.pipeline.settings.model_fields))
    return figures(args, identity, threads, work, built, revisions, evolved, decisions, seconds, calls, turn_seconds, turn_calls)


def evolutions(memory, note_id: str, texts: dict[str, str]) -> list[dict]:
    """The note's revisions by evolution: the new context (None: unchanged), the tags
    added, and the text of the note whose arrival caused it."""
    return [{"context": r.new_context if r.new_context != r.old_context else None,
             "tags": [t for t in r.new_tags if t not in r.old_tags],
             "new note": texts.get(r.cause, "")} for r in memory.history(note_id)]


def figures(args, identity, threads, work, built, revisions, evolved, decisions, seconds, calls, turn_seconds,
            turn_calls) -> dict:
    def paired(a: list[float], b: list[float]) -> dict:
        diffs = [x - y for x, y in zip(a, b)]
        low, high = paired_interval(diffs, rounds=2000) if diffs else (0.0, 0.0)
        return {"model": statistics.fmean(a), "deterministic": statistics.fmean(b),
                "difference": statistics.fmean(diffs), "interval": [low, high], "n": len(diffs)}

    def faithfulness(notes: list[dict]) -> dict:
        return {
            "contexts": share([bool(unfaithful(n["context"], n["text"])) for n in notes]),
            "deterministic contexts": share([bool(unfaithful(n["deterministic"], n["text"])) for n in notes]),
            "tags": share([bool(unfaithful(t, n["text"], summary=False)) for n in notes for t in n["tags"]]),
        }

    def junk(notes: list[dict]) -> dict:
        labels = [label for n in notes for label in n["tags"] + n["boxes"]]
        return {"tags": share([junk_kind(t) is not None for n in notes for t in n["tags"]]),
                "boxes": share([junk_kind(b) is not None for n in notes for b in n["boxes"]]),
                "examples": sorted({label for label in labels if junk_kind(label)})[:6]}

    box_counts = Counter(b for n in work for b in n["boxes"])
    asked = decisions or []
    evo_tags = [(t, e["own"]) for e in revisions for t in e["tags"]]
    return {
        "model": identity, "threads": threads, "model fields": args.fields if args.llm != "none" or args.model else "", "chain": args.chain, "cores": os.cpu_count(), "python": platform.python_version(),
        "locomo": {
            "turns": len(built),
            "f1": paired([b["f1"] for b in built], [b["f1_det"] for b in built]),
            "cosine": paired([b["cos"] for b in built], [b["cos_det"] for b in built]),
            "faithfulness": faithfulness(built), "junk": junk(built),
            "seconds": summary(turn_seconds), "calls": summary(turn_calls),
        },
        "work": {
            "notes": len(work),
            "facts kept": paired([share([fact_kept(f, w["context"]) for f in w["facts"]]) for w in work],
                                 [share([fact_kept(f, w["deterministic"]) for f in w["facts"]]) for w in work]),
            "faithfulness": faithfulness(work), "junk": junk(work),
            "boxes per 100 notes": 100 * len(box_counts) / max(1, len(work)),
            "box purity": box_purity([w["boxes"] for w in work], [w["labels"] for w in work]),
            "biggest box": [box_counts.most_common(1)[0][0], box_counts.most_common(1)[0][1] / len(work)] if box_counts else None,
            "seconds": summary(seconds), "calls": summary(calls),
        },
        "evolution": {
            "replies": len(asked) if decisions is not None else None,
            # Replies that changed nothing because the pipeline refused them (not "no change").
            "rejected": share([bool(d.problems) and d.evolution is None for d in asked]) if decisions is not None else None,
            "evolved contexts": len(evolved),
            "nearer the new note (token F1)": share([token_f1(e["context"], e["new note"]) > token_f1(e["context"], e["own"])
                                                     for e in evolved]),
            "nearer the new note (cosine)": share([e["nearer by cosine"] for e in evolved]),
            "unfaithful to their own note": share([bool(unfaithful(e["context"], e["own"])) for e in evolved]),
            "added tags": len(evo_tags),
            "added tags unfaithful or junk": share([bool(unfaithful(t, text, summary=False)) or junk_kind(t) is not None
                                                    for t, text in evo_tags]),
        },
        "shown": shown(work, built, args.show),
    }


def summary(values: list[float]) -> dict:
    return {"p50": statistics.median(values), "mean": statistics.fmean(values)} if values else {"p50": None, "mean": None}


def shown(work: list[dict], built: list[dict], n: int) -> list[dict]:
    """`n` notes (seeded), half from each set, with what the measures found in them."""
    rng = random.Random(SEED)
    picked = rng.sample(work, min(len(work), (n + 1) // 2)) + rng.sample(built, min(len(built), n // 2))
    out = []
    for p in picked:
        flags = [f"context: {x}" for x in unfaithful(p["context"], p["text"])]
        flags += [f"tag {t!r}: {x}" for t in p["tags"] for x in unfaithful(t, p["text"], summary=False)]
        flags += [f"{what} {label!r}: {kind}" for what, field in (("tag", "tags"), ("box", "boxes")) for label in p[field]
                  if (kind := junk_kind(label))]
        out.append({k: p[k] for k in ("kind", "text", "keywords", "tags", "boxes", "context", "deterministic")}
                   | {"evolved": [e["context"] for e in p.get("evolved", []) if e["context"]],
                      "flags": flags})
    return out


def render(f: dict) -> str:
    def pct(x):
        return "-" if x is None else f"{x:.1%}"

    def num(x, fmt=".3f"):
        return "-" if x is None else format(x, fmt)

    def paired_row(name, p, fmt=".3f"):
        return (f"{name:<44} {num(p['model'], fmt):>9} {num(p['deterministic'], fmt):>9}   "
                f"{p['difference']:+{fmt}} [{p['interval'][0]:+{fmt}}, {p['interval'][1]:+{fmt}}]")

    lo, wk, ev = f["locomo"], f["work"], f["evolution"]
    lines = [
        f"Note quality: llm={f['model']}, threads {f['threads'] or '-'}; {f['cores']} cores, Python {f['python']}",
        f"The model writes: {f['model fields'] or 'nothing'}",
        f"{'measure':<44} {'model':>9} {'determ.':>9}   model - determ. [95% interval]",
        "-" * 96,
        f"LoCoMo: {lo['turns']} turns with observations (context vs GPT-4 observations)",
        paired_row("  context token F1", lo["f1"]),
        paired_row("  context cosine (all-MiniLM-L6-v2)", lo["cosine"]),
        f"{'  contexts unfaithful to the turn':<44} {pct(lo['faithfulness']['contexts']):>9} {pct(lo['faithfulness']['deterministic contexts']):>9}",
        f"{'  tags unfaithful to the turn':<44} {pct(lo['faithfulness']['tags']):>9}",
        f"{'  junk tags / junk boxes':<44} {pct(lo['junk']['tags']):>9} / {pct(lo['junk']['boxes'])}"
        + (f"  e.g. {', '.join(lo['junk']['examples'])}" if lo['junk']['examples'] else ""),
        f"{'  seconds per turn p50 / mean (build)':<44} {num(lo['seconds']['p50'], '.2f'):>9} / {num(lo['seconds']['mean'], '.2f')}",
        f"{'  model calls per turn p50 / mean':<44} {num(lo['calls']['p50'], '.1f'):>9} / {num(lo['calls']['mean'], '.2f')}",
        f"Work set: {wk['notes']} hand-labelled notes, added one by one",
        paired_row("  facts kept by the context", wk["facts kept"]),
        f"{'  contexts unfaithful to the note':<44} {pct(wk['faithfulness']['contexts']):>9} {pct(wk['faithfulness']['deterministic contexts']):>9}",
        f"{'  tags unfaithful to the note':<44} {pct(wk['faithfulness']['tags']):>9}",
        f"{'  junk tags / junk boxes':<44} {pct(wk['junk']['tags']):>9} / {pct(wk['junk']['boxes'])}"
        + (f"  e.g. {', '.join(wk['junk']['examples'])}" if wk['junk']['examples'] else ""),
        f"{'  distinct boxes per 100 notes':<44} {wk['boxes per 100 notes']:>9.1f}",
        f"{'  box purity (against the labels)':<44} {pct(wk['box purity']):>9}",
        f"{'  biggest box: share of the notes':<44} {pct(wk['biggest box'][1] if wk['biggest box'] else None):>9}"
        + (f" ({wk['biggest box'][0]})" if wk["biggest box"] else ""),
        f"{'  seconds per note p50 / mean (add)':<44} {num(wk['seconds']['p50'], '.2f'):>9} / {num(wk['seconds']['mean'], '.2f')}",
        f"{'  model calls per note p50 / mean':<44} {num(wk['calls']['p50'], '.1f'):>9} / {num(wk['calls']['mean'], '.2f')}",
        f"Evolution: the work set, then {f['chain']} turns of one LoCoMo conversation, added one by one",
        f"{'  evolution replies / share rejected':<44} {ev['replies'] if ev['replies'] is not None else '-':>9} / {pct(ev['rejected'])}",
        f"{'  evolved contexts':<44} {ev['evolved contexts']:>9}",
        f"{'  nearer the new note: token F1 / cosine':<44} {pct(ev['nearer the new note (token F1)']):>9} / {pct(ev['nearer the new note (cosine)'])}",
        f"{'  unfaithful to their own note':<44} {pct(ev['unfaithful to their own note']):>9}",
        f"{'  added tags / unfaithful or junk':<44} {ev['added tags']:>9} / {pct(ev['added tags unfaithful or junk'])}",
    ]
    for i, note in enumerate(f["shown"], 1):
        lines += ["", f"[{i}] {note['kind']}", f"  text:          {note['text']}",
                  f"  keywords:      {', '.join(note['keywords'])}", f"  tags:          {', '.join(note['tags'])}",
                  f"  boxes:         {', '.join(note['boxes'])}", f"  context:       {note['context']}",
                  f"  deterministic: {note['deterministic']}"]
        lines += [f"  evolved into:  {c}" for c in note["evolved"]]
        lines += [f"  ! {flag}" for flag in note["flags"]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="LoCoMo JSON (e.g. ../shared/data/locomo-dev.json)")
    parser.add_argument("--llm", choices=("none", "default"), default="default",
                        help="none (the deterministic method) or default (the bundled SmolLM2-135M-Instruct)")
    parser.add_argument("--model", type=Path, metavar="PATH", help="a GGUF file to use instead of the bundled model")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: amem's, half the cores)")
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS, help=f"LoCoMo turns to sample (default {DEFAULT_TURNS})")
    parser.add_argument("--chain", type=int, default=20, metavar="N",
                        help="then the first N turns of the first conversation, added in order for evolution (default 20)")
    parser.add_argument("--show", type=int, default=10, metavar="N", help="notes to print whole (default 10)")
    parser.add_argument("--fields", help="amem's model_fields setting: the fields the model writes (default: amem's "
                        "default for that model; 'all' measures every field)")
    parser.add_argument("--embedder", help="amem's embedder setting (default: amem's default)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if not args.data.is_file():
        parser.error(f"no LoCoMo file at {args.data} (pass --data PATH to locomo-dev.json)")
    if args.model and not args.model.is_file():
        parser.error(f"no GGUF file at {args.model}")
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
