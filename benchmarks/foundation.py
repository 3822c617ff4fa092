"""Foundation figures: how fast amem writes, starts and searches.

    .venv/bin/python benchmarks/foundation.py                 # 1,000 notes
    .venv/bin/python benchmarks/foundation.py --notes 10000   # 10,000 notes (~12 min on 2 cores)
    .venv/bin/python benchmarks/foundation.py --embedder fake # quick check, no model

Builds an N-note vault through `AgentMemory.add_many` (synthetic notes from a seeded
generator: a dozen topics with their own vocabulary, so a query has a right answer),
then prints the machine, the command, and:

- add_many throughput (notes/s: writing files + SQLite + embedding + Chroma; the
  model load is timed on its own),
- `AgentMemory.retrieve` p50/p95 in process over --queries queries after a warm-up,
- hit@1 / hit@5 of those queries (each query is made from one note's words), as a sanity check,
- `amem --help` wall time, median of 5 fresh processes,
- `amem search "..."` wall time as a cold new process (nothing stays running between
  commands), median of 3: default hybrid search, and `--mode keyword` (no model load).

amem is started the way a user starts it: the `amem` script beside this Python.
Figures only; nothing here is asserted. Without --dir the vault lives in a temp folder
that is removed at the end (--keep keeps it).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from internals import services  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

# -- a deterministic generator of varied notes --------------------------------------

TOPICS: dict[str, dict[str, list[str]]] = {
    "cooking": {
        "nouns": ["risotto", "sourdough", "lasagna", "curry", "dumplings", "omelette", "paella", "brioche",
                  "ramen", "gazpacho", "pesto", "tortillas", "casserole", "meringue", "chutney"],
        "verbs": ["baked", "simmered", "seasoned", "tasted", "burnt", "plated", "marinated", "kneaded"],
        "adjs": ["spicy", "crispy", "creamy", "tangy", "smoky", "fluffy", "savoury", "zesty"],
        "places": ["in the kitchen", "at the bakery", "at a cooking class", "at grandma's house"],
    },
    "astronomy": {
        "nouns": ["telescope", "nebula", "comet", "eclipse", "constellation", "meteor shower", "galaxy",
                  "supernova", "asteroid", "observatory", "aurora", "planetarium", "star chart", "quasar", "exoplanet"],
        "verbs": ["observed", "photographed", "tracked", "mapped", "spotted", "catalogued", "measured", "aligned"],
        "adjs": ["distant", "faint", "brilliant", "dim", "orbiting", "celestial", "infrared", "spiral"],
        "places": ["from the rooftop", "at the dark-sky park", "at the observatory", "in the desert"],
    },
    "gardening": {
        "nouns": ["tomatoes", "compost", "roses", "seedlings", "greenhouse", "hedge", "orchard", "tulip bulbs",
                  "raised bed", "lavender", "pumpkins", "irrigation", "mulch", "sunflowers", "herb spiral"],
        "verbs": ["planted", "pruned", "watered", "harvested", "weeded", "repotted", "fertilised", "grafted"],
        "adjs": ["organic", "wilted", "blooming", "shaded", "fragrant", "overgrown", "leafy", "perennial"],
        "places": ["in the allotment", "in the back yard", "at the community garden", "on the balcony"],
    },
    "programming": {
        "nouns": ["compiler", "database index", "unit tests", "memory leak", "API endpoint", "regex", "race condition",
                  "linked list", "hash map", "refactoring", "merge conflict", "stack trace", "container image",
                  "build pipeline", "type checker"],
        "verbs": ["debugged", "deployed", "profiled", "rewrote", "benchmarked", "documented", "reviewed", "optimised"],
        "adjs": ["flaky", "legacy", "concurrent", "recursive", "asynchronous", "deprecated", "typed", "distributed"],
        "places": ["at the office", "during the hackathon", "on the late shift", "in the code review"],
    },
    "music": {
        "nouns": ["violin", "symphony", "drum kit", "jazz standard", "choir", "saxophone", "sonata", "ukulele",
                  "concerto", "bass guitar", "metronome", "harmonica", "opera aria", "cello suite", "playlist"],
        "verbs": ["rehearsed", "composed", "performed", "tuned", "recorded", "improvised", "conducted", "practised"],
        "adjs": ["melancholic", "upbeat", "acoustic", "orchestral", "syncopated", "haunting", "lively", "baroque"],
        "places": ["at the conservatory", "in the garage studio", "at the open-mic night", "in the concert hall"],
    },
    "travel": {
        "nouns": ["passport", "night train", "hostel", "ferry", "layover", "backpack", "visa", "road trip",
                  "souvenir", "itinerary", "boarding pass", "cable car", "border crossing", "campervan", "guidebook"],
        "verbs": ["booked", "missed", "boarded", "lost", "planned", "cancelled", "explored", "photographed"],
        "adjs": ["overnight", "crowded", "scenic", "delayed", "remote", "coastal", "budget", "last-minute"],
        "places": ["in Lisbon", "in Kyoto", "in Patagonia", "in Reykjavik"],
    },
    "fitness": {
        "nouns": ["marathon", "deadlift", "yoga class", "swim session", "cycling route", "kettlebell", "sprint drills",
                  "rowing machine", "climbing wall", "stretching routine", "heart rate", "personal best", "triathlon",
                  "push-ups", "trail run"],
        "verbs": ["trained for", "finished", "skipped", "improved", "logged", "completed", "attempted", "paced"],
        "adjs": ["exhausting", "steady", "intense", "gentle", "uphill", "interval", "endurance", "morning"],
        "places": ["at the gym", "around the lake", "at the pool", "in the park"],
    },
    "finance": {
        "nouns": ["mortgage", "index fund", "tax return", "budget spreadsheet", "pension", "invoice", "credit card",
                  "savings account", "stock options", "insurance policy", "loan", "dividend", "expense report",
                  "inflation", "emergency fund"],
        "verbs": ["refinanced", "filed", "paid off", "rebalanced", "audited", "reviewed", "cancelled", "negotiated"],
        "adjs": ["monthly", "overdue", "fixed-rate", "quarterly", "tax-free", "variable", "annual", "unexpected"],
        "places": ["with the bank", "with the accountant", "online", "at the branch office"],
    },
    "pets": {
        "nouns": ["puppy", "kitten", "parrot", "aquarium", "hamster", "vet appointment", "leash", "litter box",
                  "tortoise", "dog park", "chew toy", "bird cage", "flea treatment", "rabbit hutch", "goldfish"],
        "verbs": ["adopted", "groomed", "walked", "fed", "trained", "rescued", "vaccinated", "cuddled"],
        "adjs": ["playful", "sleepy", "stubborn", "fluffy", "anxious", "curious", "noisy", "elderly"],
        "places": ["at the shelter", "at the vet", "in the living room", "at the pet shop"],
    },
    "painting": {
        "nouns": ["watercolour", "canvas", "oil portrait", "sketchbook", "mural", "easel", "palette knife",
                  "landscape", "charcoal study", "acrylic pour", "gallery opening", "still life", "linocut",
                  "colour wheel", "self-portrait"],
        "verbs": ["painted", "sketched", "framed", "exhibited", "varnished", "mixed", "sold", "restored"],
        "adjs": ["abstract", "vivid", "impressionist", "muted", "textured", "minimalist", "surreal", "pastel"],
        "places": ["at the art studio", "at the gallery", "by the river", "in the attic"],
    },
    "health": {
        "nouns": ["flu vaccine", "blood test", "physiotherapy", "allergy", "dentist visit", "sleep schedule",
                  "prescription", "migraine", "check-up", "knee injury", "vitamin D", "eye exam", "therapy session",
                  "diet plan", "sprained ankle"],
        "verbs": ["scheduled", "recovered from", "treated", "postponed", "tracked", "managed", "diagnosed", "rested after"],
        "adjs": ["chronic", "mild", "seasonal", "routine", "painful", "persistent", "minor", "follow-up"],
        "places": ["at the clinic", "at the hospital", "at the pharmacy", "at home"],
    },
    "books": {
        "nouns": ["novel", "poetry collection", "biography", "book club", "library card", "audiobook", "memoir",
                  "detective story", "graphic novel", "short stories", "fantasy saga", "reading list", "bookshop",
                  "essay", "translation"],
        "verbs": ["finished", "recommended", "borrowed", "annotated", "reread", "reviewed", "discussed", "abandoned"],
        "adjs": ["gripping", "dense", "classic", "award-winning", "slow-burning", "witty", "dystopian", "heartfelt"],
        "places": ["at the library", "on the train", "at the book club", "in bed"],
    },
}

PEOPLE = ["Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiroshi", "Ingrid", "Jamal",
          "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tamsin",
          "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zara"]
WHEN = ["last weekend", "on Monday", "yesterday evening", "this morning", "two weeks ago", "over the holidays",
        "after work", "at dawn"]
SECOND = [
    "{p} said the {adj} {noun2} was the best part.",
    "Next time {p} wants to try the {noun2} instead.",
    "It reminded {p} of the {adj} {noun2} from last year.",
    "{p} wrote down a note about the {noun2} to remember it.",
]


def make_notes(n: int, seed: int = 7) -> list[dict]:
    """N note dicts for add_many, the same for the same seed."""
    rng = random.Random(seed)
    start = datetime(2023, 1, 1, 9, 0, tzinfo=timezone.utc)
    topics = sorted(TOPICS)
    notes = []
    for i in range(n):
        topic = topics[rng.randrange(len(topics))]
        v = TOPICS[topic]
        person = rng.choice(PEOPLE)
        noun, noun2 = rng.sample(v["nouns"], 2)
        adj = rng.choice(v["adjs"])
        text = (
            f"{person} {rng.choice(v['verbs'])} the {adj} {noun} {rng.choice(v['places'])} {rng.choice(WHEN)}. "
            + rng.choice(SECOND).format(p=person, adj=rng.choice(v["adjs"]), noun2=noun2)
        )
        notes.append({
            "content": text,
            "keywords": [noun, person],
            "tags": [topic],
            "created_at": start + timedelta(minutes=37 * i),
            "metadata": {"speaker": person, "n": i},
        })
    return notes


def make_queries(notes: list[dict], count: int, seed: int = 11) -> list[tuple[str, int]]:
    """(query, index of the note it was made from): a person, a noun and an adjective of that note."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        j = rng.randrange(len(notes))
        note = notes[j]
        person, noun = note["metadata"]["speaker"], note["keywords"][0]
        adj = next(w for w in note["content"].split() if w in TOPICS[note["tags"][0]]["adjs"])
        form = rng.choice(["what did {p} do with the {a} {n}", "{p} {a} {n}", "the {a} {n} of {p}"])
        out.append((form.format(p=person, a=adj, n=noun), j))
    return out


# -- measuring ----------------------------------------------------------------------


def amem_argv() -> list[str]:
    """How a user starts amem: the console script beside this Python, else the module."""
    script = Path(sys.executable).parent / "amem"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-c", "import sys; from amem_cli.cli.app import main; sys.argv[0] = 'amem'; main()"]


def wall(argv: list[str], runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        res = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if res.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({res.returncode}):\n{res.stderr}")
    return statistics.median(times), times


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=1000, help="how many notes to add (default 1000)")
    ap.add_argument("--embedder", default="sentence-transformers", help="sentence-transformers (default) or fake")
    ap.add_argument("--llm", default="none", help="the pipeline's model: none (default: storage and search speed) or llama")
    ap.add_argument("--dir", help="the vault folder (must be new or empty); default: a temp folder")
    ap.add_argument("--batch", type=int, default=100, help="notes per add_many call (default 100)")
    ap.add_argument("--queries", type=int, default=50, help="in-process retrieve queries (default 50)")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--keep", action="store_true", help="keep the temp vault")
    args = ap.parse_args()

    from amem_cli import AgentMemory, __version__

    tmp = None
    if args.dir:
        vault = Path(args.dir).expanduser().resolve()
        if vault.exists() and any(vault.iterdir()):
            raise SystemExit(f"{vault} is not empty; give a new or empty folder")
    else:
        tmp = Path(tempfile.mkdtemp(prefix="amem-bench-"))
        vault = tmp / "vault"
    items = make_notes(args.notes)
    queries = make_queries(items, args.queries)
    rows: list[tuple[str, str]] = []
    commands: list[str] = []

    try:
        # 1. add_many throughput (the model load is timed separately).
        mem = AgentMemory(vault, embedder=args.embedder, llm=args.llm)
        t0 = time.perf_counter()
        identity = services(mem).embedder.identity  # loads the model
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        added = []
        for start in range(0, len(items), args.batch):
            added += mem.add_many(items[start : start + args.batch])
        add_s = time.perf_counter() - t0
        ids = [n.id for n in added]
        rows.append(("embedder", identity))
        rows.append(("pipeline model", args.llm))
        rows.append(("model load (in process)", f"{load_s:.2f} s"))
        rows.append((f"add_many ({args.notes} notes, batches of {args.batch})",
                     f"{args.notes / add_s:.1f} notes/s ({add_s:.1f} s)"))

        # 2. retrieve in process: warm up, then time each query.
        for q, _ in queries[:5]:
            mem.retrieve(q, top_k=args.top_k)
        lat, hit1, hit5 = [], 0, 0
        for q, j in queries:
            t0 = time.perf_counter()
            got = mem.retrieve(q, top_k=args.top_k)
            lat.append(time.perf_counter() - t0)
            got_ids = [n.id for n in got]
            hit1 += bool(got_ids) and got_ids[0] == ids[j]
            hit5 += ids[j] in got_ids[:5]
        mem.close()
        rows.append((f"retrieve p50 / p95 ({len(queries)} queries, top {args.top_k})",
                     f"{percentile(lat, 0.5) * 1000:.1f} ms / {percentile(lat, 0.95) * 1000:.1f} ms"))
        rows.append(("retrieve hit@1 / hit@5 (query made from one note)",
                     f"{hit1 / len(queries):.2f} / {hit5 / len(queries):.2f}"))

        # 3. cold processes.
        amem = amem_argv()
        base = [*amem, "--dir", str(vault), "--embedder", args.embedder]
        q = queries[0][0]
        timed = [
            ("`amem --help` (median of 5)", [*amem, "--help"], 5),
            ("`amem search` cold, hybrid (median of 3)", [*base, "search", q, "--limit", "5"], 3),
            ("`amem search --mode keyword` cold (median of 3)", [*base, "search", q, "--mode", "keyword", "--limit", "5"], 3),
        ]
        for label, argv, runs in timed:
            med, times = wall(argv, runs)
            rows.append((label, f"{med * 1000:.0f} ms  [{', '.join(f'{t * 1000:.0f}' for t in times)}]"))
            commands.append(shlex.join(argv))
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    torch = sys.modules.get("torch")  # only if the embedder loaded it
    threads = str(torch.get_num_threads()) if torch is not None else "n/a"
    context = [
        ("amem", __version__),
        ("python", platform.python_version()),
        ("platform", platform.platform()),
        ("cpu count", str(os.cpu_count())),
        ("torch threads", threads),
        ("vault", str(vault) + ("" if args.dir or args.keep else " (removed)")),
        ("command", shlex.join([sys.executable, *sys.argv])),
    ]
    width = max(len(k) for k, _ in context + rows)
    print("\namem foundation benchmark")
    print("-" * (width + 40))
    for k, v in context:
        print(f"{k:<{width}}  {v}")
    print("-" * (width + 40))
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print("-" * (width + 40))
    print("cold commands timed:")
    for c in commands:
        print(f"  {c}")


if __name__ == "__main__":
    main()
