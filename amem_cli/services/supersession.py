"""Current facts first: a newer note that changes a value an older one states supersedes it.

The newer note carries `supersedes: ['[[OLD]]']` in its frontmatter, the older one
`superseded_by: ['[[NEW]]']` where amem may write its file (not a pinned or hand-edited
note: the index still knows, from the newer note). Either written by hand counts. Each
change is a revision (`amem history`, `amem undo`).

Found when a note is added, without a model (`steps.supersede.judge`): its candidates are
the older notes it links to and those that share its words. What the detector is unsure
of is not linked but kept in the index, for `amem supersede --suggest` (a hint: the
notes are not changed for it).

Search and context put the current note before the one it superseded and mark both
(`current_first`); `as_of` answers as things stood then: later notes and later
supersessions do not count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime

from ..errors import UsageError
from ..models import Note, SearchHit
from ..retrieve.query import keywords
from ..steps.supersede import NO, SUPERSEDES, Verdict, changing_words, judge, may_change
from ..timeutil import to_utc
from .pipeline import Pipeline
from .writer import NoteWriter

# Older notes compared with a new one: the best by its words (and those it links to).
CANDIDATES = 5
# Words of a new note its candidates are looked for by (`changing_words`; a long note's first ones).
QUERY_WORDS = 24
PERSON = "person"  # the cause of a supersession a person made (`amem supersede`)


class Supersessions:
    def __init__(self, writer: NoteWriter, pipeline: Pipeline):
        self.writer = writer
        self.index = writer.index
        self.indexer = writer.indexer
        self.pipeline = pipeline  # which notes amem may write (`hand_edited`), how links merge

    # -- found when notes are added ------------------------------------------------------
    def detect(self, notes: list[Note]) -> dict[str, dict[str, Verdict]]:
        """Compare each new note (not pinned) with its older candidates; link what it
        supersedes, keep what the detector is unsure of for `suggestions`. Returns {new
        note: {older note: verdict}} of what was found."""
        order = {n.id: i for i, n in enumerate(notes)}
        found: dict[str, dict[str, Verdict]] = {}
        for note in notes:
            if note.extra.get("pinned") is True:
                continue
            verdicts = {}
            for old_id, old_text in self._candidates(note, order):
                verdict = judge(note.content, old_text)
                if verdict.decision != NO:
                    verdicts[old_id] = verdict
            if verdicts:
                found[note.id] = verdicts
        self._record(found, cause="amem")  # the batch's together: one write of each note changed
        return found

    def _candidates(self, note: Note, order: dict[str, int]) -> list[tuple[str, str]]:
        """(id, text) of the `CANDIDATES` older notes sharing most of the new note's words,
        best first (the full text's order), and of those it links to; not those it
        supersedes already, nor those it cannot change (`may_change`: a model's long
        answer, another speaker's long turn). (Later notes are read and passed over: a note
        added to a vault that holds later ones, by an import of old chats, gets its
        candidates among the older.)"""
        words = keywords(changing_words(note.content))[:QUERY_WORDS]
        ranked = [i for i, _ in self.index.fulltext.search(words, 4 * (CANDIDATES + 1))]
        found = self.index.notes.texts([*ranked, *note.links])  # their text and dates, not the whole notes
        done = set(note.supersedes)
        older = {i for i, (text, created) in found.items() if i != note.id and i not in done
                 and _older(i, created, note, order)
                 and may_change(note.content, text)}  # (a model's long answers take no place)
        best = [i for i in ranked if i in older][:CANDIDATES]  # in the full text's order, not the notes' dates
        return [(i, found[i][0]) for i in dict.fromkeys([*best, *(i for i in note.links if i in older)])]

    # -- made and undone -------------------------------------------------------------------
    def supersede(self, old_id: str, new_id: str) -> dict:
        """A person says NEW supersedes OLD: both notes say so (OLD's file where amem may
        write it), each change a revision. Returns what `amem supersede --json` prints."""
        old, new = self._pair(old_id, new_id)
        if old.id in new.supersedes:
            raise UsageError(f"{new.id} supersedes {old.id} already", hint=f"`amem show {new.id}` shows it")
        if new.id in old.supersedes:
            raise UsageError(f"{old.id} supersedes {new.id}: one of them must be the newer",
                             hint=f"`amem supersede --undo {new.id} {old.id}` first")
        self._record({new.id: {old.id: Verdict(SUPERSEDES, "a person said so")}}, cause=PERSON)
        return self._result(old.id, new.id)

    def undo(self, old_id: str, new_id: str) -> dict:
        """NEW no longer supersedes OLD: the link goes from both files, each change a
        revision; or a suggestion of it is dismissed."""
        old, new = self._pair(old_id, new_id)
        with self.index.transaction():
            dismissed = self.index.supersessions.drop_suggestion(new.id, old.id)
        if old.id not in new.supersedes:
            if dismissed:
                return self._result(old.id, new.id)
            raise UsageError(f"{new.id} does not supersede {old.id}", hint=f"`amem show {new.id}` shows what it supersedes")
        self.indexer.sync()
        self.writer.revise_with(new.id, lambda n: replace(n, supersedes=self._without(n.supersedes, old.id)),
                                cause="supersede --undo", model=None, redo=True, what=f"no longer supersedes {old.id}")
        self.writer.revise_with(old.id, lambda n: replace(n, superseded_by=self._without(n.superseded_by, new.id)),
                                cause="supersede --undo", model=None, redo=True, what=f"no longer superseded by {new.id}")
        return self._result(old.id, new.id)

    def _pair(self, old_id: str, new_id: str) -> tuple[Note, Note]:
        if old_id == new_id:
            raise UsageError("a note cannot supersede itself", hint="give the older note, then the newer: OLD NEW")
        return self.writer.get(old_id), self.writer.get(new_id, sync=False)

    def _result(self, old_id: str, new_id: str) -> dict:
        new = self.index.notes.get(new_id)
        return {"old": old_id, "new": new_id, "supersedes": old_id in new.supersedes}

    def _without(self, written: list[str], note_id: str) -> list[str]:
        """The links as written, less those that name `note_id`."""
        names = self.index.links.resolve(written)
        return [w for w in written if names.get(w, w) != note_id]

    def _record(self, found: dict[str, dict[str, Verdict]], *, cause: str) -> None:
        """`found` ({newer note: {older note: verdict}}): each newer note gets what it
        supersedes, each older note it supersedes `superseded_by`, where amem may write it
        (not pinned, not edited by a person since amem wrote it; a person's command writes
        it anyway). Each note changed is written once, in one revision, with the others
        (`NoteWriter.revise_many`: one flush to disk for them all). What the detector is
        unsure of goes to the index only (`suggestions`).

        No sync here: every caller has just synced (`prepare` before a store, `get` for a
        person's command, the queued job's `update`), and a sync per supersession looked at
        every file of the vault when no watcher tells which changed: an import of N notes
        did it about N/3 times. Each file is read afresh before it is written, and a note
        found pinned there is left as it is."""
        linked = {new: {i: v.reason for i, v in verdicts.items() if v.decision == SUPERSEDES} for new, verdicts in found.items()}
        with self.index.transaction():
            for new_id, verdicts in found.items():
                self.index.supersessions.suggest(new_id, {i: v.reason for i, v in verdicts.items() if v.decision != SUPERSEDES})
                for old_id in linked[new_id]:
                    self.index.supersessions.drop_suggestion(new_id, old_id)
        supersedes: dict[str, list[str]] = {}  # {note: what it comes to supersede}
        superseded_by: dict[str, list[str]] = {}  # {note: what it comes to be superseded by}
        what: dict[str, list[str]] = {}
        stored = self.index.notes.get_many({i for olds in linked.values() for i in olds})  # one read for the batch
        for new_id, olds in linked.items():
            if not olds:
                continue
            supersedes[new_id] = list(olds)
            what.setdefault(new_id, []).extend(f"supersedes {i} ({r})" for i, r in olds.items())
            for old_id in olds:
                old = stored.get(old_id)
                if old is None or cause == "amem" and (old.extra.get("pinned") is True or self.pipeline.hand_edited(old_id, old)):
                    continue  # the index knows it from the newer note
                superseded_by.setdefault(old_id, []).append(new_id)
                what.setdefault(old_id, []).append(f"superseded by {new_id}")
        if not what:
            return

        def change(note_id: str) -> Callable[[Note], Note]:
            def changed(n: Note) -> Note:
                if note_id in supersedes:
                    n = replace(n, supersedes=self.pipeline.merged(n.supersedes, supersedes[note_id]))
                # Not a note pinned by a save the index has not seen yet.
                if note_id in superseded_by and not (cause == "amem" and n.extra.get("pinned") is True):
                    n = replace(n, superseded_by=self.pipeline.merged(n.superseded_by, superseded_by[note_id]))
                return n
            return changed

        self.writer.revise_many({i: (change(i), "; ".join(w)) for i, w in what.items()}, cause="supersede",
                                model=None if cause == "amem" else PERSON)

    # -- suggested -------------------------------------------------------------------------
    def suggestions(self) -> list[dict]:
        """The pairs the detector was unsure of, newest first: {"old", "new", "reason", and
        each note's date and text}; not those linked since."""
        self.indexer.sync()
        pairs = self.index.supersessions.suggestions()
        notes = self.index.notes.get_many({i for new, old, _ in pairs for i in (new, old)})
        return [{"old": old, "new": new, "reason": why, "old_date": _iso(notes[old].created_at),
                 "new_date": _iso(notes[new].created_at), "old_content": notes[old].content,
                 "new_content": notes[new].content}
                for new, old, why in pairs if new in notes and old in notes and old not in notes[new].supersedes]


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when else None


def _older(old_id: str, old_created: datetime | None, new: Note, order: dict[str, int]) -> bool:
    """Whether the note `old_id` (created `old_created`) was said before `new`: in a
    batch, by its order; else by date."""
    if old_id in order and new.id in order:
        return order[old_id] < order[new.id]
    if old_created is None or new.created_at is None:
        return False
    return to_utc(old_created) <= to_utc(new.created_at)


# -- search and context: the current note first ----------------------------------------------


def current_first(hits: list[SearchHit], index, *, as_of: datetime | None, limit: int,
                  allowed: Callable[[Iterable[str]], set[str]]) -> list[SearchHit]:
    """The hits with every note a hit was superseded by (as of `as_of`) ranked just above
    it, brought in when the search did not find it (if `allowed` lets it through: the
    search's filters), and each hit marked with what it replaces and what replaced it.

    The chains are read off the hits' notes, which the index hands out with every
    supersession either note states (`NoteStore.get_many`): no second lookup per search."""
    if not any(h.note.supersedes or h.note.superseded_by for h in hits):
        return hits
    dates = _dates(index, [h.note for h in hits], as_of)
    chains = {h.note.id: _chain(h.note, dates) for h in hits}
    by_id = {h.note.id: h for h in hits}
    missing = [n for h in hits for n in chains[h.note.id]["superseded_by"] if n not in by_id]
    if missing:
        welcome = allowed(missing)
        brought = list(index.notes.get_many([m for m in dict.fromkeys(missing) if m in welcome]).values())
        dates |= _dates(index, brought, as_of)
        for note in brought:
            older = next(h for h in hits if note.id in chains[h.note.id]["superseded_by"])
            by_id[note.id] = SearchHit(note, older.score, {"replaces": {"of": older.note.id}})
            chains[note.id] = _chain(note, dates)
    ranked = _newer_above(sorted(by_id.values(), key=lambda h: -h.score), chains)[:limit]
    for hit in ranked:
        chain = chains[hit.note.id]
        hit.replaces = [{"id": i, "date": _iso(dates[i])} for i in chain["supersedes"]]
        hit.replaced_by = [{"id": i, "date": _iso(dates[i])} for i in chain["superseded_by"]]
    return ranked


def _dates(index, notes: list[Note], as_of: datetime | None) -> dict[str, datetime | None]:
    """{note: when it was created} for the notes these supersede or are superseded by,
    those that exist and (with `as_of`) were created by then."""
    named = {i for n in notes for i in (*n.supersedes, *n.superseded_by)}
    created = index.notes.created(named)
    if as_of is None:
        return created
    return {i: c for i, c in created.items() if c is None or to_utc(c) <= to_utc(as_of)}


def _chain(note: Note, dates: dict[str, datetime | None]) -> dict[str, list[str]]:
    """The notes `note` supersedes and is superseded by, of those in `dates` (a name
    written by hand that names no note, or a note created after `as_of`, is left out)."""
    return {kind: [i for i in getattr(note, kind) if i in dates and i != note.id]
            for kind in ("supersedes", "superseded_by")}


def _newer_above(hits: list[SearchHit], chains: dict[str, dict[str, list[str]]]) -> list[SearchHit]:
    """Each note moved up to just above the highest-ranked note it supersedes."""
    ranked = list(hits)
    newer = {h.note.id: set(chains[h.note.id]["superseded_by"]) for h in hits}
    for _ in range(len(ranked)):  # a chain of n notes settles in n passes
        for i, hit in enumerate(ranked):
            j = next((j for j in range(i + 1, len(ranked)) if ranked[j].note.id in newer[hit.note.id]), None)
            if j is not None:
                ranked.insert(i, ranked.pop(j))
                break
        else:
            break
    return ranked
