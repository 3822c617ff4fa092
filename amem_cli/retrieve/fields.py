"""What search keeps of a note in the index besides the note itself: who says it, the
times its text states, its full-text row (which fields go in, in whose words, and how
much each column counts) and the text its vectors are made of. The index stores what
these rules make; the rules are search's, and the composition root hands them to the
index (`SqliteIndex(path, SearchFields())`).
"""

from __future__ import annotations

import re

from ..models import Note
from ..steps.construct import summary_sentence
from ..text import chat_role, passages
from ..time_phrases import stated_words
from ..timeutil import date_words

# "Name: text" or "First Last: text" at the start of a note: who said it (or a chat log's
# role: `text.chat_role`).
_SPEAKER = re.compile(r"^([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")

# The full-text row's columns and their bm25 weights: the note's own text weighs most.
FULLTEXT_COLUMNS = ("content", "keywords", "tags", "context", "neighbours", "dates")
FULLTEXT_WEIGHTS = (1.0, 0.8, 0.5, 0.6, 0.5, 0.5)


def speaker_of(note: Note) -> str | None:
    """Who said or wrote a note: `speaker` (or a chat's `role`) in its metadata, else a
    leading "Name:" or role ("user:")."""
    for key in ("speaker", "role"):
        given = note.metadata.get(key)
        if isinstance(given, str) and given.strip():
            return given.strip()
    m = _SPEAKER.match(note.content.lstrip())  # a hand-written file may open with a blank line
    return m.group(1) if m else chat_role(note.content)


def embedding_text(note: Note) -> str:
    """What gets embedded: the content with its lead sentence again (what it is about,
    `steps.construct.summary_sentence`), its context, keywords and tags."""
    return _with_fields(note, note.content.strip())


def embedding_texts(note: Note) -> list[str]:
    """What gets embedded, one vector each: the embedding text, or for a note longer than
    an embedder reads at once, its passages (`text.passages`), the first with the note's
    context, keywords and tags."""
    first, *rest = passages(note.content.strip())
    return [_with_fields(note, first), *rest]


def _with_fields(note: Note, content: str) -> str:
    parts = [content]
    lead = summary_sentence(note.content)
    if lead:  # what the note is about, weighed twice (see `summary_sentence`)
        parts.append(lead)
    if note.context and note.context.strip() != lead:
        parts.append(note.context.strip())
    if note.keywords:
        parts.append("Keywords: " + ", ".join(note.keywords))
    if note.tags:
        parts.append("Tags: " + ", ".join(note.tags))
    return "\n".join(parts)


def embedding_source(note: Note) -> str:
    """What the note's vectors are made of (their hash tells when they are stale): the
    embedded text and the fields a model wrote, which its second vector is made without
    (`steps.construct.deterministic_version`)."""
    text = embedding_text(note)
    return f"{text}\x00{','.join(note.generated)}" if note.generated else text


class SearchFields:
    """The rules above, as the index is handed them."""

    weights = FULLTEXT_WEIGHTS
    embedding_source = staticmethod(embedding_source)

    @staticmethod
    def features(note: Note) -> dict[str, str | None]:
        """The columns of a note's index row that search ranks by: who says it (the name
        boost), the times its text states, in words (the time boost)."""
        return {"speaker": speaker_of(note), "stated": stated_words(note.content, note.created_at)}

    @staticmethod
    def deterministic_words(version: Note) -> dict[str, str]:
        """What the full-text row takes of a note as the deterministic method makes it
        (`steps.construct.deterministic_version`): its keywords, tags and context."""
        return {"keywords": " ".join(version.keywords), "tags": " ".join(version.tags), "context": version.context}

    @staticmethod
    def fulltext_row(note: Note, deterministic: dict[str, str], neighbours: list[str]) -> dict[str, str]:
        """A note's full-text row ({column: text}), with its `deterministic_words` ({}
        until the note is embedded) and the text of its sequence `neighbours` (a reply such as
        "Yes, last Tuesday!" is found by the words of the note it answers).

        The row holds what a person (or the note's own words) said; fields a model wrote
        (`note.generated`) reach search through the note's vector only. A small model's
        tags and context ("discusses family memories") would otherwise match questions
        across many notes and crowd out the note that says the thing. In their place the
        deterministic method's fields: without them a note the model labelled ranks below
        the same note labelled without a model (LoCoMo dev recall@10 with the bundled
        model's vaults 0.762, with them 0.772; --llm none 0.775)."""
        fields = {"keywords": " ".join(note.keywords), "tags": " ".join(note.tags), "context": note.context}
        for name in note.generated:
            if name in fields:
                fields[name] = deterministic.get(name, "")
        return {"content": note.content, **fields, "neighbours": "\n".join(neighbours),
                "dates": date_words(note.created_at.date()) if note.created_at else ""}
