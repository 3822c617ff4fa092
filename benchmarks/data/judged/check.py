"""Validate judged_notes.jsonl and transcripts/ (parse, schema, keyword-in-text, counts).

Run: python3 check.py   (from this folder). Prints counts; exits 1 on any problem.
"""
import json, re, sys, glob, os
from collections import Counter, defaultdict
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
problems = []

def variants(kw):
    k = kw.lower()
    out = {k, k + "s", k + "es"}
    if k.endswith("ies"): out.add(k[:-3] + "y")
    if k.endswith("es"): out.add(k[:-2])
    if k.endswith("s"): out.add(k[:-1])
    if k.endswith("y"): out.add(k[:-1] + "ies")
    return out

notes = [json.loads(l) for l in open(os.path.join(HERE, "judged_notes.jsonl"), encoding="utf-8")]
ids = Counter(n["id"] for n in notes)
for i, c in ids.items():
    if c > 1: problems.append(f"duplicate id {i}")
STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "it", "is", "this", "that", "with", "for"}
for n in notes:
    nid = n["id"]
    for f in ("id", "source", "text", "created", "keywords", "tags", "topic", "context"):
        if f not in n: problems.append(f"{nid}: missing {f}")
    if n["source"] not in ("work", "chat", "agent"): problems.append(f"{nid}: bad source")
    datetime.fromisoformat(n["created"])
    text = n["text"].lower()
    if not 2 <= len(n["keywords"]) <= 6: problems.append(f"{nid}: {len(n['keywords'])} keywords")
    for kw in n["keywords"]:
        if not any(v in text for v in variants(kw)):
            problems.append(f"{nid}: keyword {kw!r} not in text")
    if not 1 <= len(n["tags"]) <= 4: problems.append(f"{nid}: {len(n['tags'])} tags")
    for t in n["tags"]:
        if t != t.lower() or len(t) > 20: problems.append(f"{nid}: tag {t!r}")
    tp = n["topic"]
    if tp.lower() in STOP or re.search(r"\.\w{1,4}$", tp): problems.append(f"{nid}: topic {tp!r}")
    ctx = n["context"]
    first = re.split(r"(?<=[.!?])\s", n["text"].split(": ", 1)[-1])[0].strip().lower()
    if ctx and (ctx.lower().strip() == first or ctx.lower().rstrip(".") in text):
        problems.append(f"{nid}: context repeats the note")
    if ctx and len(re.findall(r"[.!?](\s|$)", ctx)) > 1:
        problems.append(f"{nid}: context is more than one sentence")
    if n["source"] == "chat" and not re.match(r"^[A-Z][a-z]+: ", n["text"]): problems.append(f"{nid}: chat not 'Name: text'")
    if n["source"] == "agent" and not re.match(r"^(user|assistant): ", n["text"]): problems.append(f"{nid}: agent not 'user:/assistant:'")

topics = Counter(n["topic"] for n in notes)
for t, c in topics.items():
    if c < 4: problems.append(f"topic {t!r} has {c} notes (<4)")
    if c > 0.15 * len(notes): problems.append(f"topic {t!r} has {c} notes (>15%)")
for n in notes:
    if "topic_also" in n and n["topic_also"] not in topics: problems.append(f"{n['id']}: topic_also not a topic")

# transcripts
tdir = os.path.join(HERE, "transcripts")
files = sorted(p for p in glob.glob(os.path.join(tdir, "*.jsonl")) if not p.endswith("labels.jsonl"))
labels = [json.loads(l) for l in open(os.path.join(tdir, "labels.jsonl"), encoding="utf-8")]
by_file = defaultdict(dict)
for l in labels:
    if set(l) != {"file", "line", "filler", "attach", "why"}: problems.append(f"label keys {l}")
    if l["attach"] not in ("previous", "next", None): problems.append(f"bad attach {l}")
    if not l["why"]: problems.append(f"no why {l['file']}:{l['line']}")
    by_file[l["file"]][l["line"]] = l
per_file = {}
for p in files:
    name = os.path.basename(p)
    msgs = [json.loads(x) for x in open(p, encoding="utf-8")]
    if not 20 <= len(msgs) <= 60: problems.append(f"{name}: {len(msgs)} messages")
    for i, m in enumerate(msgs, 1):
        ok = (set(m) == {"role", "content"} and m["role"] in ("user", "assistant")) or set(m) == {"speaker", "content"}
        if not ok: problems.append(f"{name}:{i} bad message keys")
        if i not in by_file[name]: problems.append(f"{name}:{i} has no label")
    if set(by_file[name]) - set(range(1, len(msgs) + 1)): problems.append(f"{name}: labels beyond file")
    fill = sum(by_file[name][i]["filler"] for i in range(1, len(msgs) + 1))
    per_file[name] = (len(msgs), fill)

print(f"notes: {len(notes)}  by source: {dict(Counter(n['source'] for n in notes))}")
print(f"topics: {len(topics)}")
for t, c in sorted(topics.items(), key=lambda x: (-x[1], x[0])):
    srcs = Counter(n["source"] for n in notes if n["topic"] == t)
    print(f"  {c:3d}  {t}  {dict(srcs)}")
print(f"topic_also: {sum('topic_also' in n for n in notes)}  empty contexts: {sum(not n['context'] for n in notes)}")
tm = tf = 0
for name, (m, f) in per_file.items():
    print(f"  {name}: {m} messages, {f} filler ({100*f/m:.0f}%)")
    tm += m; tf += f
print(f"transcripts: {len(per_file)}, messages {tm}, filler {tf} ({100*tf/tm:.1f}%)")
attach = Counter((l["filler"], l["attach"]) for l in labels)
print("filler/attach:", dict(attach))
if problems:
    print("\nPROBLEMS:"); [print(" -", p) for p in problems]; sys.exit(1)
print("OK")
