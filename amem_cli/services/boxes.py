"""Filing notes into the vault's topics (`steps.boxes`): each new note once it is stored
and embedded, and all of them again on `amem boxes --rebuild`. As notes come, the inbox
is also swept now and then (`BoxFiler.sweep`): its notes that group as a rebuild groups
them become a topic, named as the rebuild names it, so topics form without a rebuild.

Only the notes amem filed are moved: those whose boxes are the ones it wrote
(`Note.filed`), or that have none. A box a person gave a note, or moved it into by hand,
stays as it is, with that note in it: such a box is never renamed or emptied, and alike
notes may join it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any

from ..index.sqlite import SqliteIndex
from ..models import Note
from ..steps.boxes import DEFAULT_BOX, JOIN_SLACK, MEAN_PRIOR, MIN_NOTES, centred, groups, name, nearest, note_terms, used_as_verb, vault_mean
from .indexer import Indexer
from .writer import NoteWriter

# The nearest notes whose boxes a new note may join, or with which (in the inbox) it may form one.
NEIGHBOURS = 10
# Index meta key: {"sum": the sum of the vectors of the notes filed so far, "count": how
# many}, the vault's mean vector notes are centred on (`steps.boxes.centred`): kept as notes
# come, made exact by `amem boxes --rebuild`.
VAULT_MEAN = "boxes_vault_mean"
# No topic forms as notes come until the vault holds this many: what all its notes share
# (its mean vector, `steps.boxes.vault_mean`) is not known before, and topics formed then
# are of what the first notes share (on the judged set: a speaker's name, "maya" for a
# wedding and a hike). The first sweep of the inbox then groups them all at once.
MIN_VAULT = MEAN_PRIOR
# Index meta key: how many notes the inbox held after its last sweep (`BoxFiler.sweep`).
INBOX_SWEPT = "boxes_inbox_swept"
# The inbox is swept once it holds this many notes more than after its last sweep, or a
# quarter more when that is more: a sweep reads every boxed note's vector, so it comes
# less often as the vault grows.
SWEEP_AFTER = 5


def amems(note: Note) -> bool:
    """Whether amem may file the note: its boxes are amem's, or it has none; not pinned."""
    return note.extra.get("pinned") is not True and (note.filed or not note.boxes)


class BoxFiler:
    def __init__(self, index: SqliteIndex, indexer: Indexer, writer: NoteWriter, similarity: float):
        self.index, self.indexer, self.writer = index, indexer, writer
        self.similarity = similarity  # the `box_similarity` setting

    def file(self, notes: list[Note], vectors: Mapping[str, Any], people: Collection[str] = ()) -> dict[str, list[str]]:
        """{note id: the boxes to file it in} for those of `notes` (stored, embedded:
        `vectors`, in the order they came) amem holds in the inbox: each goes to the box it
        is most alike, when alike enough; else, when it and inbox notes among its nearest
        are alike enough and MIN_NOTES or more, they form a new box (those inbox notes are
        in the answer too); else it stays. Each is filed by the vault as it was when the
        note came (the notes after it aside), so a batch files its notes as one at a time
        would. `people`: names no box is named after. The caller writes the changes."""
        import numpy as np

        todo = [n for n in notes if n.id in vectors and n.filed and n.boxes == [DEFAULT_BOX]]
        if not todo or self.index.notes.count() < MIN_VAULT:
            return {}
        order = {n.id: k for k, n in enumerate(notes)}
        total, count = self._vault_sum([n.id for n in todo], len(vectors[todo[0].id]))
        means = {}  # the vault's mean vector as it was when each note came
        for note in todo:
            total, count = total + np.asarray(vectors[note.id], dtype=np.float64), count + 1
            means[note.id] = vault_mean(total, count)
        self._keep_vault_sum(total, count)
        nearest_notes = self.indexer.nearest_many([vectors[n.id] for n in todo], NEIGHBOURS + len(notes))
        known = self.index.notes.get_many({i for hits in nearest_notes for i, _ in hits}, links=False)
        known.update({n.id: n for n in todo})
        boxes = {i: list(n.boxes) for i, n in known.items()}
        topics = self._topics({b for bs in boxes.values() for b in bs if b != DEFAULT_BOX})
        changes: dict[str, list[str]] = {}

        def move(ids: list[str], box: str) -> None:
            for i in ids:
                boxes[i] = changes[i] = [box]

        for note, hits in zip(todo, nearest_notes):
            later = [n.id for n in notes[order[note.id] + 1:]]
            vector, mean = np.asarray(vectors[note.id], dtype=np.float64), means[note.id]
            near = [i for i, _ in hits if i != note.id and i in known and order.get(i, -1) < order[note.id]][:NEIGHBOURS]
            fits = {b: (centred(*topics[b], mean), topics[b][1]) for i in near for b in boxes[i] if b in topics}
            if (box := nearest(centred(vector, 1, mean), fits, self.similarity, slack=0.0)) is not None:
                move([note.id], box)
                topics[box] = (topics[box][0] + vector, topics[box][1] + 1)
                continue
            waiting = [i for i in near if boxes[i] == [DEFAULT_BOX] and amems(known[i])]
            if len(waiting) + 1 < MIN_NOTES:
                continue
            alike = self.indexer.vectors_of(waiting)
            pool = [note.id, *(i for i in waiting if i in alike)]
            matrix = np.array([vector, *(alike[i] for i in pool[1:])], dtype=np.float64)
            group = next(g for g in groups(centred(matrix, 1, mean), self.similarity) if 0 in g)
            if len(group) < MIN_NOTES:
                continue
            members = [pool[k] for k in group]
            box = self._name([known[i] for i in members], people, taken={*topics, *self._names()}, without=later)
            if box is not None:
                move(members, box)
                topics[box] = (matrix[group].sum(axis=0), len(group))
        changes.update(self.sweep(changes, means[todo[-1].id], people))
        return changes

    def sweep(self, filed: Mapping[str, list[str]], mean: Any, people: Collection[str]) -> dict[str, list[str]]:
        """{note id: [box]} for the inbox's notes amem holds that now have a topic, once the
        inbox has grown enough since its last sweep (SWEEP_AFTER): grouped as a rebuild
        groups them (`_cluster`) against the vault's boxes as they are (with `filed`, what
        this batch files), each group of MIN_NOTES or more joins the box it is alike or
        forms a new one; an inbox note a box fits joins it. Only inbox notes move: no box
        is renamed or emptied. `mean`: the vault's mean vector."""
        import numpy as np

        inbox = [i for i in self.index.notes.box_notes([DEFAULT_BOX]).get(DEFAULT_BOX, []) if i not in filed]
        swept = int(self.index.get_meta(INBOX_SWEPT) or 0)
        if len(inbox) < swept + max(SWEEP_AFTER, swept // 4):
            return {}
        stored = self._topics(self._names() - {DEFAULT_BOX})
        notes = self.index.notes.get_many(inbox, links=False)
        vectors = self.indexer.vectors_of(sorted({*notes, *filed}))
        for note_id, boxes in filed.items():  # what this batch files, not written yet
            for box in boxes:
                if note_id in vectors:
                    total, count = stored.get(box, (0.0, 0))
                    stored[box] = (total + np.asarray(vectors[note_id], dtype=np.float64), count + 1)
        topics = {box: (centred(total, count, mean), count) for box, (total, count) in stored.items()}
        ours = [i for i in inbox if i in notes and i in vectors and amems(notes[i])]
        matrix = centred(np.array([vectors[i] for i in ours], dtype=np.float64).reshape(-1, len(mean)), 1, mean)
        filed_now = self._cluster(ours, matrix, notes, topics, set(topics), people, slack=0.0)
        out = {i: [box] for i, box in filed_now.items() if box != DEFAULT_BOX}
        with self.index.transaction():
            self.index.set_meta(INBOX_SWEPT, str(len(inbox) - len(out)))
        return out

    def _vault_sum(self, exclude: Collection[str], dim: int) -> tuple[Any, int]:
        """(sum, count) of the vectors of the vault's notes filed so far, as kept; when none
        is kept (or one of another embedder), of all its embedded notes but `exclude`."""
        import numpy as np

        kept = json.loads(self.index.get_meta(VAULT_MEAN) or "null")
        if kept and kept.get("embedder") == self.indexer.embedder().identity and len(kept["sum"]) == dim:
            return np.asarray(kept["sum"], dtype=np.float64), int(kept["count"])
        vectors = self.indexer.vectors_of(sorted(set(self.index.notes.ids()) - set(exclude)))
        return np.asarray(list(vectors.values()), dtype=np.float64).reshape(-1, dim).sum(axis=0), len(vectors)

    def _keep_vault_sum(self, total: Any, count: int) -> None:
        kept = {"embedder": self.indexer.embedder().identity, "sum": [round(float(x), 6) for x in total], "count": count}
        with self.index.transaction():
            self.index.set_meta(VAULT_MEAN, json.dumps(kept))

    def _topics(self, boxes: Collection[str]) -> dict[str, tuple[Any, int]]:
        """{box: (sum of its notes' vectors, notes)} for these boxes, as stored."""
        import numpy as np

        members = self.index.notes.box_notes(boxes)
        vectors = self.indexer.vectors_of(sorted({i for ids in members.values() for i in ids}))
        out = {}
        for box, ids in members.items():
            found = [vectors[i] for i in ids if i in vectors]
            if found:
                out[box] = (np.asarray(found, dtype=np.float64).sum(axis=0), len(found))
        return out

    def _names(self) -> set[str]:
        return {box for box, _ in self.index.notes.boxes()}

    def _name(self, notes: list[Note], people: Collection[str], taken: Collection[str],
              without: Collection[str] = ()) -> str | None:
        """A new box's name, from its notes' keywords (`steps.boxes.name`), naming none of
        `people` (who speak in the vault's conversations); the vault's notes but those
        `without` are what its terms are told apart from."""
        people = {w for p in people for w in p.lower().split()}
        terms = [note_terms(n.keywords, people) for n in notes]
        verbs = {t for t in set().union(*terms) if used_as_verb(t, (n.content for n in notes))}
        terms = [ts - verbs for ts in terms]
        counts = self.index.fulltext.notes_with((t for ts in terms for t in ts), without=without)
        return name(terms, counts, max(self.index.notes.count() - len(without), 1), taken)

    def rebuild(self, people: Collection[str] = ()) -> dict:
        """`amem boxes --rebuild`: every note amem may file (`amems`) grouped again
        (`steps.boxes.groups`), each group of MIN_NOTES or more a box: the box most of its
        notes were in when that is amem's or a person's, else a person's box it is alike,
        else a new one named by its terms; the other notes go to the box they are most
        alike when alike enough, else to the inbox. Each note moved is one revision
        (`amem history`, `amem undo`). Returns what it did."""
        import numpy as np

        self.indexer.sync()
        self.indexer.flush_vectors()
        notes = self.index.notes.get_many(self.index.notes.ids(), links=False)
        vectors = self.indexer.vectors_of(sorted(notes))
        ours = [i for i in sorted(notes) if amems(notes[i]) and i in vectors]
        if not ours:
            return {"filed": 0, "moved": 0, "kept": len(notes), "boxes": []}
        everything = np.asarray(list(vectors.values()), dtype=np.float64)
        self._keep_vault_sum(everything.sum(axis=0), len(vectors))
        mean = vault_mean(everything.sum(axis=0), len(vectors))
        topics: dict[str, tuple[Any, int]] = {}  # {box: (sum of its notes' vectors, centred: `centred`), notes}
        for i, note in notes.items():  # a person's boxes, as they are
            if i in vectors and not amems(note):
                for box in note.boxes:
                    if box != DEFAULT_BOX:
                        total, count = topics.get(box, (0.0, 0))
                        topics[box] = (total + centred(np.asarray(vectors[i], dtype=np.float64), 1, mean), count + 1)
        matrix = centred(np.array([vectors[i] for i in ours], dtype=np.float64), 1, mean)
        filed = self._cluster(ours, matrix, notes, topics, joinable=set(topics), people=people)
        moved = self._write({i: [box] for i, box in filed.items() if notes[i].boxes != [box]})
        with self.index.transaction():  # the inbox as this leaves it is the next sweep's start
            self.index.set_meta(INBOX_SWEPT, str(sum(box == DEFAULT_BOX for box in filed.values())))
        return {"filed": len(filed), "moved": moved, "kept": len(notes) - len(filed),
                "boxes": sorted(Counter(filed.values()).items(), key=lambda kv: (-kv[1], kv[0]))}

    def _cluster(self, ids: list[str], matrix: Any, notes: Mapping[str, Note], topics: dict[str, tuple[Any, int]],
                 joinable: Collection[str], people: Collection[str], slack: float = JOIN_SLACK) -> dict[str, str]:
        """{note id: box} for the notes `ids` (rows of `matrix`: their vectors, `centred`),
        as `rebuild` files them: grouped (`steps.boxes.groups`), each group of MIN_NOTES or
        more a box (the box most of its notes were in, else one of the `joinable` boxes of
        `topics` it is alike, else a new one named by its terms); the other notes go to the
        box they are most alike when alike enough (`slack`: `steps.boxes.nearest`), else to
        the inbox. `topics` ({box: (centred sum, notes)}) gains what is filed."""
        filed: dict[str, str] = {}
        left: list[int] = []
        joinable = set(joinable)
        used: set[str] = set()  # boxes given a group in this run: no other is "kept" in one but a joinable
        for group in sorted(groups(matrix, self.similarity), key=len, reverse=True):
            if len(group) < MIN_NOTES:
                left += group
                continue
            total = matrix[group].sum(axis=0)
            box = self._kept(group, ids, notes, taken=used - joinable)
            alike = [b for b in joinable if b in topics]
            if box is None and alike:
                best = max(alike, key=lambda b: float(total @ topics[b][0]) / topics[b][1])
                box = best if float(total @ topics[best][0]) / (topics[best][1] * len(group)) >= self.similarity else None
            if box is None:
                box = self._name([notes[ids[k]] for k in group], people, taken=set(topics))
            if box is None:
                left += group
                continue
            used.add(box)
            before = topics.get(box, (0.0, 0))
            topics[box] = (before[0] + total, before[1] + len(group))
            filed.update({ids[k]: box for k in group})
        for k in left:
            filed[ids[k]] = nearest(matrix[k], topics, self.similarity, slack) or DEFAULT_BOX
        return filed

    @staticmethod
    def _kept(group: list[int], ids: list[str], notes: Mapping[str, Note], taken: Collection[str]) -> str | None:
        """The box most of the group's notes were in (not the inbox, nor a new box named
        already in this rebuild): a rebuild keeps the boxes it finds again."""
        counts = Counter(b for k in group for b in notes[ids[k]].boxes if b != DEFAULT_BOX)
        box, count = counts.most_common(1)[0] if counts else (None, 0)
        return box if box is not None and 2 * count >= len(group) and box not in taken else None

    def _write(self, changes: Mapping[str, list[str]]) -> int:
        """File each note as `changes` says, one revision each (a person's save meanwhile
        that takes the note over wins). Returns how many notes moved."""
        moved = 0
        for note_id, boxes in changes.items():
            def change(note: Note, boxes: list[str] = boxes) -> Note:
                return note.filed_in(boxes) if amems(note) else note

            before = self.index.notes.get(note_id)
            after = self.writer.revise_with(note_id, change, cause="boxes rebuild", model=None, redo=True)
            moved += before is None or after.boxes != before.boxes
        return moved
