"""Step 1, note construction: keywords, tags and a one-sentence context for a new note.

What the user gave is kept as given; the model is asked only for what is missing (and
not at all when nothing is). Model keywords must occur in the note; anything unusable
falls back to deterministic extraction, and the fallen-back fields are recorded.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Collection, Sequence

from amem_cli.embed.base import Embedder
from amem_cli.llm import prompts
from amem_cli.llm.base import LLM
from amem_cli.llm.structured import clean_list, clean_sentence, dedupe_key, first_sentence, trim_words
from amem_cli.models import Note
from amem_cli.steps._common import StepStats, ask
from amem_cli.steps.checks import context_problem, junk_label, thin_sentence, topic_labels
from amem_cli.steps._text import is_stop_or_vague, of_the_note, segments, tokens
from amem_cli.text import without_speakers, words

FIELDS = ("keywords", "tags", "context")
MAX_KEYWORDS = 5
MAX_TAGS = 3
CONTEXT_MAX_WORDS = 25
_JOINERS = frozenset({"of"})
# A note's kind is looked for this far into it (a long note's start says enough).
_KIND_CHARS = 2000
# Output tokens asked for per missing field.
_TOKENS = {"keywords": 60, "tags": 40, "context": 80}


@dataclass(kw_only=True)
class Construction(StepStats):
    keywords: list[str]
    tags: list[str]
    context: str
    # Fields that came from the deterministic fallback instead of the model.
    fallbacks: list[str] = field(default_factory=list)
    # Where each field came from: "user", "llm" or "fallback" (the model's output unusable, or
    # the model not asked for it: recorded alike, so a person's edit derives it again).
    sources: dict[str, str] = field(default_factory=dict)


def construct(
    content: str,
    *,
    keywords: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    context: str | None = None,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    max_keywords: int = MAX_KEYWORDS,
    max_tags: int = MAX_TAGS,
    model_fields: Collection[str] = FIELDS,
    created: datetime | None = None,
) -> Construction:
    """Keywords (most important first), tags and context for `content`. The model is asked
    only for the missing fields in `model_fields`; the others are the deterministic
    method's, recorded as fallbacks. `created`: when the note was written (the
    deterministic context says it). Never raises on bad model output; `LLMError` (backend
    unusable) propagates."""
    content = content or ""
    given_keywords = _given_list(keywords)
    given_tags = _given_list(tags)
    given_context = " ".join(context.split()) if isinstance(context, str) else ""

    result = Construction(keywords=given_keywords, tags=given_tags, context=given_context)
    missing = [
        name
        for name, value in (("keywords", given_keywords), ("tags", given_tags), ("context", given_context))
        if not value
    ]
    for name in FIELDS:
        if name not in missing:
            result.sources[name] = "user"
    if not missing:
        return result

    asked = [name for name in missing if name in model_fields]
    data: dict[str, Any] = {}
    if content.strip() and asked:
        parsed = ask(
            llm,
            prompts.construct_messages(content, asked, keywords=given_keywords, tags=given_tags),
            prompts.construct_schema(asked),
            max_tokens=sum(_TOKENS[m] for m in asked) + 10,
            stats=result,
        )
        if parsed is not None and parsed.data is not None:
            data = parsed.data

    # A transcript's speaker labels ("assistant: ...") are not what a note is about.
    said = without_speakers(content)
    if "keywords" in missing:
        kws = clean_list(data.get("keywords"), max_items=max_keywords * 2, max_chars=prompts.KEYWORD_MAX_CHARS)
        kws = of_the_note_only(kws, said, result.problems, "keyword")[:max_keywords]
        if kws:
            result.keywords, result.sources["keywords"] = kws, "llm"
        else:
            result.keywords = extract_keywords(said, embedder, top_n=max_keywords)
            result.sources["keywords"] = "fallback"
            result.fallbacks.append("keywords")

    if "tags" in missing:
        tg = clean_list(data.get("tags"), max_items=max_tags * 2, max_chars=prompts.TAG_MAX_CHARS, max_words=2)
        tg = [t.lower() for t in of_the_note_only(tg, said, result.problems, "tag")]
        tg = clean_list(topic_labels(tg, result.problems), max_items=max_tags)
        if tg:
            result.tags, result.sources["tags"] = tg, "llm"
        else:
            result.tags = tags_from_keywords(result.keywords or extract_keywords(said, embedder), max_tags)
            result.sources["tags"] = "fallback"
            result.fallbacks.append("tags")

    if "context" in missing:
        ctx = clean_sentence(data.get("context"), max_chars=prompts.CONTEXT_MAX_CHARS)
        problem = context_problem(ctx, content) if ctx else "missing"
        if problem is None:
            result.context, result.sources["context"] = ctx, "llm"
        else:
            if ctx:
                result.problems.append(f"context {ctx!r} rejected: {problem}")
            result.context = note_context(content, created)
            result.sources["context"] = "fallback"
            result.fallbacks.append("context")
    return result


def of_the_note_only(values: list[str], text: str, problems: list[str], what: str) -> list[str]:
    """`values` that are words of the note (`of_the_note`): no made-up keyword or tag is
    ever written; each dropped one noted in `problems`."""
    kept = []
    for value in values:
        if of_the_note(value, text):
            kept.append(value)
        else:
            problems.append(f"{what} {value!r} dropped: not words of the note")
    return kept


def deterministic_version(note: Note, embedder: Embedder | None) -> Note:
    """The note as the deterministic method makes it: the fields a model wrote
    (`note.generated`) made again without the model, the rest as they are."""
    kept = {name: getattr(note, name) for name in FIELDS if name not in note.generated}
    c = construct(note.content, **kept, embedder=embedder, created=note.created_at)
    return replace(note, keywords=c.keywords, tags=c.tags, context=c.context)


def deterministic_versions(notes: list[Note], embedder: Embedder) -> dict[str, Note]:
    """{id: the note as the deterministic method makes it (`deterministic_version`)}, for the notes a model
    wrote fields of; keyword extraction's embeddings in one batch."""
    aided = [n for n in notes if n.generated]
    batched = BatchedEmbedder(embedder, [n.content for n in aided if "keywords" in n.generated])
    return {n.id: deterministic_version(n, batched) for n in aided}


class PhraseVectors:
    """The vectors of short texts (candidate phrases) embedded lately, kept from batch to
    batch: names and topic words recur from note to note, and embedding each note's 20 or
    so phrases again made keyword extraction most of an import's time (1,000 short notes:
    43 notes/s against 83 with keywords given). Least recently used go first."""

    MAX_WORDS = 3  # candidate phrases have 1-3 words; a note's own text is not worth keeping
    SIZE = 20_000  # phrases kept (about 33 MB as float32)

    def __init__(self, size: int = SIZE):
        self.size = size
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._identity: str | None = None  # the embedder's: another model's vectors are no use

    def _of(self, embedder: Embedder) -> None:
        if embedder.identity != self._identity:
            self._vectors.clear()
            self._identity = embedder.identity

    def take(self, embedder: Embedder, texts: list[str]) -> dict[str, Any]:
        """The vectors (by `embedder`) of those of `texts` that are kept."""
        self._of(embedder)
        found = {}
        for text in texts:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
                found[text] = vector
        return found

    def keep(self, embedder: Embedder, vectors: dict[str, Any]) -> None:
        import numpy as np

        self._of(embedder)
        for text, vector in vectors.items():
            if len(tokens(text)) <= self.MAX_WORDS:
                self._vectors[text] = np.asarray(vector, dtype=np.float32)  # a list of floats takes 8 times the room
                self._vectors.move_to_end(text)
        while len(self._vectors) > self.size:
            self._vectors.popitem(last=False)


class BatchedEmbedder:
    """An embedder with what keyword extraction will ask for (each text, less a
    transcript's speaker labels as `construct` ranks it, and its candidate phrases)
    embedded in one batch up front: many small calls cost far more. `phrases`: vectors
    kept from earlier batches, used and added to."""

    def __init__(self, embedder: Embedder, contents: list[str], phrases: PhraseVectors | None = None):
        self.embedder, self.phrases = embedder, phrases
        self._cache: dict[str, Any] = {}
        said = [without_speakers(c) for c in contents]
        self.embed(list(dict.fromkeys(t for c in said for t in [c, *candidate_phrases(c)])))

    @property
    def identity(self) -> str:
        return self.embedder.identity

    def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing and self.phrases is not None:
            self._cache.update(self.phrases.take(self.embedder, missing))
            missing = [t for t in missing if t not in self._cache]
        if missing:
            new = dict(zip(missing, self.embedder.embed(missing)))
            self._cache.update(new)
            if self.phrases is not None:
                self.phrases.keep(self.embedder, new)
        return [self._cache[t] for t in texts]


def _given_list(values: Sequence[str] | None) -> list[str]:
    if not values:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    seen: set[str] = set()
    for v in values:
        v = " ".join(str(v).split())
        if v and dedupe_key(v) not in seen:
            seen.add(dedupe_key(v))
            out.append(v)
    return out


# -- deterministic fallbacks -----------------------------------------------------------


# The characters of a note keyword extraction reads: a 1 MiB note took 10-25 s here (each
# token is looked at three times over), all of it in the one turn the servers' calls
# share; a note's first 20,000 characters say what it is about.
PHRASE_TEXT = 20_000


def candidate_phrases(text: str, *, max_n: int = 3, limit: int = 64) -> list[str]:
    """1-3 word phrases from `text` (its first PHRASE_TEXT characters) without stopwords
    (except "of" inside, as in "Bank of America"), never crossing punctuation; most
    frequent first, then in order of appearance. The first spelling seen is kept."""
    seen: dict[str, list[Any]] = {}  # key -> [surface, count, first position, n]
    position = 0
    for segment in segments(text[:PHRASE_TEXT]):
        toks = tokens(segment)
        for i in range(len(toks)):
            for n in range(1, max_n + 1):
                gram = toks[i : i + n]
                if len(gram) < n:
                    break
                if not (_edge_ok(gram[0]) and _edge_ok(gram[-1])):
                    continue
                if any(is_stop_or_vague(t) and t.casefold() not in _JOINERS for t in gram[1:-1]):
                    continue
                key = " ".join(t.casefold() for t in gram)
                if key in seen:
                    seen[key][1] += 1
                else:
                    seen[key] = [" ".join(gram), 1, position + i, n]
        position += len(toks)
    ranked = sorted(seen.values(), key=lambda e: (-e[1], e[2], -e[3]))
    return [e[0] for e in ranked[:limit]]


def _edge_ok(token: str) -> bool:
    return len(token) >= 2 and not is_stop_or_vague(token) and any(ch.isalnum() for ch in token)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    import numpy as np  # here, not at start-up: `amem --help` need not load it

    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norms if norms else 0.0


def extract_keywords(text: str, embedder: Embedder | None = None, *, top_n: int = MAX_KEYWORDS) -> list[str]:
    """KeyBERT-style keywords: candidate phrases ranked by embedding similarity to the
    whole note (by frequency and position without an embedder), skipping phrases whose
    words are mostly covered by better ones."""
    cands = candidate_phrases(text)
    if not cands:
        return []
    scores: dict[str, float] = {}
    if embedder is not None:
        try:
            vectors = embedder.embed([text] + cands)
            note_vec = vectors[0]
            for cand, vec in zip(cands, vectors[1:]):
                scores[cand] = cosine(note_vec, vec)
        except Exception:  # an embedder failure must not lose the note
            scores = {}
    if scores:
        order = {c: i for i, c in enumerate(cands)}
        ranked = sorted(cands, key=lambda c: (-round(scores[c], 6), order[c]))
    else:
        ranked = cands
    chosen: list[str] = []
    covered: set[str] = set()
    for cand in ranked:
        cws = [w.casefold() for w in tokens(cand) if not is_stop_or_vague(w)]
        if not cws:
            continue
        overlap = sum(1 for w in cws if w in covered)
        if overlap * 2 >= len(cws):
            continue
        chosen.append(cand)
        covered.update(cws)
        if len(chosen) >= top_n:
            break
    return chosen


def tags_from_keywords(keywords: Sequence[str], max_tags: int = MAX_TAGS) -> list[str]:
    """Broad, deterministic tags: the head (last content word) of each keyword, when it
    names a topic (not a number, an id or a speaker)."""
    heads: list[str] = []
    for kw in keywords:
        cws = [w for w in words(kw) if not is_stop_or_vague(w) and len(w) > 1 and junk_label(w) is None]
        if cws:
            heads.append(cws[-1])
    return clean_list(heads, max_items=max_tags, max_chars=prompts.TAG_MAX_CHARS, max_words=1)


# What kind of note it is, by the words with which it says so. A wrong kind is a false
# statement, so only words that name the kind count, and only in the note's lead (its first
# sentence, where a note says what it is): a rollout policy that mentions a crash is no
# bug, a retro that mentions fixes is no fix, a request "Plan it first" is no plan.
# Symptoms (fails, error, crash), "bugs" in general, "going to", "loves", "the enterprise
# plan" and a mere "call with" say no kind. When the lead names two kinds, the first named
# is the note's ("Agreed, fix the ordering": a decision).
KINDS = (
    ("a decision", r"\b(?:decided|decision|agreed|chose|settled on|going with)\b"),
    ("a fix", r"\b(?:fixed|fix for|the fix|workaround|patched)\b|^fix\b"),
    ("a bug", r"\b(?:bug|regression)\b"),
    ("an incident", r"\b(?:incident|outage|post-?mortem)\b"),
    ("a meeting", r"\b(?:meeting|stand-?up|retro|retrospective|1:1|one-to-one|sync with)\b"),
    ("a plan", r"^plan\b(?!\s+(?:it|this|that|them|out)\b)|\bplan(?: for\b|:)|\bthe plan\b|\b(?:planned|todo|next steps)\b"),
    ("a preference", r"\b(?:prefers?|preferred|preference|favou?rite)\b"),
    ("a command", r"^\$ \S|`[^`\n]*\s--?[a-z][^`\n]*`|\b(?:run|ran|use)\s+`[^`\n]+`|\b(?:run|with):\s+[a-z][\w.-]*\s.*?\s--?[a-z]"),
)
_KINDS = [(name, re.compile(pattern, re.IGNORECASE)) for name, pattern in KINDS]


def lead(text: str) -> str:
    """The note's first sentence (of its first line), without a transcript's speaker label."""
    said = without_speakers(text[:_KIND_CHARS]).strip()
    return first_sentence(said.split("\n", 1)[0].strip()) if said else ""


def kind_of(text: str) -> str | None:
    """The kind its lead names ("a decision", "a bug", ...; `KINDS`), "a question" for a
    note that starts by asking, or None: better no kind than a wrong one."""
    first = lead(text)
    found = [(m.start(), i, name) for i, (name, pattern) in enumerate(_KINDS) if (m := pattern.search(first))]
    if found:
        return min(found)[2]
    return "a question" if first.endswith("?") else None


def note_context(text: str, created: datetime | None = None) -> str:
    """The deterministic context: what the note does not lead with, its kind and when
    ("A decision, February 2024."); "" when it has no kind to tell (its date alone every
    view shows already). Never the note's own first sentence: that only repeats it."""
    kind = kind_of(text)
    if kind is None:
        return ""
    when = f", {created:%B %Y}" if created is not None else ""
    return f"{kind[0].upper()}{kind[1:]}{when}."


def summary_sentence(text: str, *, max_words: int = CONTEXT_MAX_WORDS) -> str:
    """The note's first sentence that says something (a transcript's speaker labels and
    Markdown markers stripped; the very first when none does), trimmed to `max_words`.
    Not a context (it would only repeat the note): the note's vector weighs it twice
    (`retrieve.fields.embedding_text`), as it did while every context was this sentence. Without it
    the vectors moved, and with them the links the graph ranks by: LoCoMo dev MRR -0.014
    [-0.026, -0.003] (504 questions, --llm none); the full-text row holding it again
    changed nothing (-0.014)."""
    seen: list[str] = []
    for line in without_speakers(text[:_KIND_CHARS]).splitlines():
        rest = " ".join(line.strip().lstrip("#>*-+ \t").split())
        while rest:
            sentence = first_sentence(rest) or rest
            rest = rest[len(sentence):].strip()
            seen.append(sentence)
            if thin_sentence(sentence) is None:
                return trim_words(sentence, max_chars=prompts.CONTEXT_MAX_CHARS, max_words=max_words)
    return trim_words(seen[0] if seen else "", max_chars=prompts.CONTEXT_MAX_CHARS, max_words=max_words)
