"""The A-MEM pipeline around a write: before a new note's file is written it is *built*
(keywords, tags, context); once it is indexed and embedded it is *filed* into the vault's
topics (its boxes) and *linked* to related notes (both ways), and the notes it links
*evolve* (context and tags only, each change a revision that `amem undo` can reverse)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta

from ..errors import AmemError, ConflictError
from ..index.sqlite import SqliteIndex
from ..llm.base import LLM, LLMError
from ..models import MODEL_FIELDS, Note
from ..retrieve.fields import speaker_of
from ..steps import Candidate, NewNote, choose_links, construct, decide_evolutions
from ..steps.boxes import DEFAULT_BOX
from ..steps.construct import BatchedEmbedder, PhraseVectors, cosine
from ..timeutil import now
from ..vault import Vault
from .indexer import Indexer
from .boxes import BoxFiler
from .jobs import QUEUED, JobQueue
from .rederive import DERIVABLE, fallbacks_of, filled, recorded, rederived, to_rederive
from .writer import NoteWriter

# A file modified this long after amem last wrote it (its `updated`) was edited by hand.
HAND_EDIT_SLACK = timedelta(seconds=2)
# A keyword more than this many notes share says little about what two notes have in
# common, and ranking all of its notes cost more than embedding the note (24 ms a note
# at 73,000 notes): link candidates come from the rarer keywords, and the vectors.
COMMON_KEYWORD = 1000


@dataclass(frozen=True)
class PipelineSettings:
    link_k: int = 5  # nearest notes by embedding considered for links
    link_threshold: float = 0.5  # cosine similarity a candidate needs
    max_links: int = 3
    # "similarity": the nearest candidates above the threshold are linked. "model": the
    # model picks among them (the A-MEM paper's way). Built with the bundled 135M model,
    # the nearest notes ranked evidence a little higher than its picks (LoCoMo MRR +0.01
    # on both dev conversations) and the vault was built 9-21 % faster.
    link_choice: str = "similarity"
    box_similarity: float = 0.2  # how alike a box's notes are (`steps.boxes`)
    # The fields the model writes (config.MODEL_FIELDS); the others are the deterministic method's.
    model_fields: frozenset[str] = frozenset(MODEL_FIELDS)


@dataclass
class PipelineStats:
    """What the pipeline did, summed over the notes of one write (for benchmarks)."""

    notes: int = 0
    llm_calls: int = 0
    valid_outputs: list[bool] = field(default_factory=list)
    fallbacks: int = 0
    links: int = 0
    evolutions: int = 0
    # What was wrong with the model's outputs, each rejected field with its reason.
    problems: list[str] = field(default_factory=list)

    def count(self, step) -> None:
        self.llm_calls += step.llm_calls
        self.valid_outputs.extend(step.valid_outputs)
        self.problems.extend(step.problems)


class Pipeline:
    def __init__(self, vault: Vault, index: SqliteIndex, indexer: Indexer, writer: NoteWriter, queue: JobQueue,
                 llm: Callable[[], LLM | None], settings: PipelineSettings | None = None,
                 phrases: PhraseVectors | None = None, on_completed: Callable[[list[Note]], object] | None = None):
        """`writer`: changes stored notes (links, evolution, fields derived again); `queue`:
        the deferred work; `llm`: the model (None: none), made at its first use;
        `phrases`: keyword extraction's phrase vectors, kept across batches;
        `on_completed`: told of each note whose queued work is done (the container looks
        for what it supersedes)."""
        self.vault = vault
        self.index = index
        self.indexer = indexer
        self.writer = writer
        self.queue = queue
        self._llm = llm
        self.settings = settings or PipelineSettings()
        self.stats = PipelineStats()
        self.phrases = phrases or PhraseVectors()
        self.boxes = BoxFiler(index, indexer, writer, self.settings.box_similarity)
        self.on_completed = on_completed or (lambda notes: None)

    @property
    def llm(self) -> LLM | None:
        """The model, or None when there is none."""
        return self._llm()

    # -- before writing ---------------------------------------------------
    def construct(self, notes: list[Note], *, model: bool = True) -> None:
        """Fill in what the user did not give: keywords, tags and context, and the inbox
        for a note without boxes until it is filed (`connect`). Fields where the model's
        output was unusable and the deterministic method stepped in are recorded in
        `metadata.amem_fallbacks`, the fields the model wrote in `metadata.amem_generated`.
        `model=False`: by the deterministic method alone, each field it writes recorded as
        owed to the model (the queued work replaces those the model writes)."""
        llm = self.llm if model else None
        owed = not model and self.has_model()
        # Keyword extraction's embeddings, batched up front when it will surely run.
        contents = [n.content for n in notes if not n.keywords] if llm is None else []
        embedder = BatchedEmbedder(self.indexer.embedder(), contents, self.phrases)
        for note in notes:
            c = construct(note.content, keywords=note.keywords, tags=note.tags, context=note.context,
                          llm=llm, embedder=embedder, model_fields=self.settings.model_fields, created=note.created_at)
            note.keywords, note.tags, note.context = c.keywords, c.tags, c.context
            if not note.boxes:  # until it is filed, once embedded
                filed = note.filed_in([DEFAULT_BOX])
                note.boxes, note.metadata = filed.boxes, filed.metadata
            self.stats.count(c)
            fallbacks = list(c.fallbacks)
            self.stats.fallbacks += len(fallbacks)
            if owed:  # the model's work follows: what the deterministic method wrote is owed to it
                fallbacks = [f for f, by in c.sources.items() if by == "fallback"]
            if llm is not None or owed:  # with no model at all the fallbacks are the method
                if fallbacks:
                    note.metadata = {**note.metadata, "amem_fallbacks": fallbacks}
                note.metadata = note.with_generated([f for f, by in c.sources.items() if by == "llm"])
            self.stats.notes += 1

    def _people(self, notes: list[Note]) -> set[str]:
        """Who speaks in the vault's conversations and in these notes' (a sequence, not
        indexed yet), when one of the notes is a turn ("Name: ..."): no box is named after
        them (they are in every turn of their chats: `steps.boxes`)."""
        said = [speaker_of(n) for n in notes]
        if not any(said):
            return set()
        turns = {(a, b) for a, b, c in zip(said[2:], said[1:], said) if a and b and a == c and a != b}
        return self.index.notes.conversation_speakers() | {name for pair in turns for name in pair}

    def rebuild_boxes(self) -> dict:
        """`amem boxes --rebuild` (`BoxFiler.rebuild`)."""
        return self.boxes.rebuild(self.index.notes.conversation_speakers())

    # -- deferred work ----------------------------------------------------
    def process(self, limit: int | None = None, progress: Callable[[int, int], None] | None = None, *,
                until: float | None = None) -> list[str]:
        """Work the queue of deferred notes in order: build what is missing, link, evolve.
        Each job is claimed first, so no other worker does it too, and leaves the queue
        only once done: a killed worker's job goes to the next one. `until`: no job is
        started after this `time.monotonic()`."""
        self.indexer.sync()  # a person's edits first: a note pinned since it was queued is left alone
        total = len(self.index.jobs.queued(limit))
        done: list[str] = []
        while (limit is None or len(done) < limit) and (until is None or time.monotonic() < until):
            note_id = self.queue.claim()
            if note_id is None:
                break
            started = time.monotonic()
            self._do_job(note_id)
            # Timed only when a model worked: the rate `amem status` estimates from is the model's.
            self.queue.finish(note_id, time.monotonic() - started if self.has_model() else None)
            done.append(note_id)
            if progress:
                progress(len(done), max(total, len(done)))
        return done

    def cancel(self, ids: list[str] | None = None, progress: Callable[[int, int], None] | None = None) -> dict:
        """Drop queued jobs (`ids`, else all): their notes get at once what amem derives
        without the model (keywords, tags, context, boxes, links by similarity) and stop
        saying their work is owed. A job a worker holds is left to it (`running`); an id
        with no job is `not_queued`."""
        plain = Pipeline(self.vault, self.index, self.indexer, self.writer, self.queue, lambda: None, self.settings,
                         self.phrases, self.on_completed)
        queued = self.index.jobs.queued()
        targets = queued if ids is None else list(dict.fromkeys(ids))
        waiting = set(queued)
        report: dict[str, list[str]] = {"cancelled": [], "running": [], "not_queued": []}
        for note_id in targets:
            if self.queue.claim(note_id) is None:
                report["running" if note_id in waiting else "not_queued"].append(note_id)
                continue
            plain._do_job(note_id)
            self.queue.finish(note_id)
            report["cancelled"].append(note_id)
            if progress:
                progress(len(report["cancelled"]), len(targets))
        return report

    def _do_job(self, note_id: str) -> None:
        """The work on a claimed job's note; a failure gives the job back, counted."""
        try:
            note = self.index.notes.get(note_id)
            if note is not None and note.extra.get("pinned") is not True:  # pinned since it was queued: left alone
                self._complete(note)
        except Exception as exc:
            self.queue.release(note_id, f"{type(exc).__name__}: {exc}")
            raise
        except BaseException:  # interrupted: not the job's fault
            self.queue.release(note_id, None)
            raise

    def _complete(self, stored: Note) -> None:
        """Build what is missing, and what the deterministic method holds in the model's
        place since a person changed the note's text (`rederive`); then link."""
        owed = fallbacks_of(stored)
        built = replace(stored.copy(), **{f: "" if f == "context" else [] for f in owed if f in DERIVABLE})
        built.metadata = recorded(built.metadata, built.generated, [])
        self.construct([built])

        def fill(n: Note) -> Note:  # a person may have edited meanwhile
            if n.content != stored.content:  # built from a text that is no more; `rederive` saw the edit
                return replace(n, metadata={k: v for k, v in n.metadata.items() if k != QUEUED})
            return filled(n, built, owed)

        edited = any(r["cause"] == "edit" for r in self.index.revisions.of(stored.id))
        if edited:  # the model's version of fields derived again after an edit: a revision too
            self.indexer.sync()
            model = self.llm.identity if self.llm is not None else None  # None: the deterministic method's
            self.writer.revise_with(stored.id, fill, cause="edit", model=model, redo=True)
            self.indexer.flush_vectors()
            return  # linked before the edit; `amem undo` gives back the person's save
        self.writer.update(stored.id, fill)
        self.connect([self.index.notes.get(stored.id)])
        self.on_completed([self.index.notes.get(stored.id)])

    # -- after a person's edit ---------------------------------------------
    def rederive(self, edited: list[Note]) -> None:
        """A person changed these notes' text (`edited`: as indexed before the change). The
        fields amem derived from the old text are derived again from the new one by the
        deterministic method at once, each note's change a revision (`amem undo`), and,
        with a model, the model's version is queued for `process`. Pinned notes and the
        fields a person wrote are left as they are."""
        current = self.index.notes.get_many([n.id for n in edited], links=False)
        todo = [(before, note) for before in edited
                if (note := current.get(before.id)) is not None and note.derived and note.extra.get("pinned") is not True]
        if not todo or self.vault.read_only:  # (a read-only vault: amem may not write there)
            return
        embedder, model = self.indexer.embedder(), self.has_model()
        for before, note in todo:
            queued_at = now().isoformat()

            def change(current: Note, before: Note = before) -> Note:
                new = rederived(current, before, embedder=embedder)
                if model and to_rederive(current, before):
                    new.metadata.setdefault(QUEUED, queued_at)
                return new

            try:  # made again on the person's bytes if they save meanwhile
                new = self.writer.revise_with(note.id, change, cause="edit", model=None, redo=True)
            except (AmemError, OSError) as exc:  # the person keeps saving, the disk is full...: their bytes stay
                self.indexer.problems.append(f"{note.id}: its fields were not derived again from its new text: {exc}")
                continue
            if QUEUED in new.metadata:
                with self.index.transaction():
                    self.index.jobs.enqueue([note.id], new.metadata[QUEUED])

    def queue_new(self, notes: list[Note]) -> None:
        """Notes a person added by hand (files amem never wrote, seen for the first time)
        get the work an added note gets, queued: built (what they lack), linked, evolved.
        Their files are left as they are until that work writes them. Not pinned ones."""
        todo = [n.id for n in notes if n.extra.get("pinned") is not True]
        if not todo or self.vault.read_only:  # (a read-only vault: amem may not write there)
            return
        with self.index.transaction():
            self.index.jobs.enqueue(todo, now().isoformat())

    def has_model(self) -> bool:
        """Whether a model is configured and can be found (else there is no model work to queue)."""
        try:
            return self.llm is not None
        except LLMError:
            return False

    # -- after writing ----------------------------------------------------
    def connect(self, notes: list[Note], *, evolve: bool = True) -> None:
        """File each new note in the inbox into the vault's topics (`BoxFiler.file`) and link
        it to related notes (both ways), then let those evolve. The boxes and links of the
        whole batch are chosen first, against the vault as stored, and then written with
        each file touched once (a note linked by many is rewritten once). The notes it
        links already evolve too (a note linked when stored, its model work queued);
        `evolve=False`: none evolves (that work is queued)."""
        vectors = self.indexer.vectors_of([n.id for n in notes])
        notes = [n for n in notes if n.id in vectors]
        boxes = self.boxes.file(notes, vectors, self._people(notes))
        candidates = self._candidates(notes, vectors)
        pairs: list[tuple[str, str]] = []
        evolving: list[tuple[Note, list[str]]] = []
        for note in notes:
            linked_now = {a if b == note.id else b for a, b in pairs if note.id in (a, b)}
            linked = self.propose_links(note, candidates[note.id], exclude=linked_now)
            # Decided before the backlinks are written: that write would make a
            # person's note look as if amem had written it last.
            evolving.append((note, [t for t in dict.fromkeys([*note.links, *linked]) if evolve and self._may_evolve(t)]))
            pairs += [(note.id, t) for t in linked]
        self._apply_links(pairs, boxes)
        for note, targets in evolving:
            for target, changes in self._proposed_evolutions(note, targets).items():
                self._revise(target, changes, note.id)

    def revisit(self, note_id: str, *, dry_run: bool = False) -> dict:
        """`amem evolve`: link an existing note again and let all its linked notes evolve.
        Returns {"links": new link ids, "evolutions": {id: changes}}; `dry_run` writes nothing."""
        note = self.writer.get(note_id)
        vector = self.indexer.vectors_of([note_id]).get(note_id)
        new_links = self.propose_links(note, self._candidates([note], {note_id: vector})[note_id]) if vector is not None else []
        evolutions = self._proposed_evolutions(note, list(dict.fromkeys(note.links + note.backlinks + new_links)))
        if not dry_run:
            self._apply_links([(note_id, t) for t in new_links])
            evolutions = {t: changes for t, changes in evolutions.items() if self._revise(t, changes, note_id)}
        return {"links": new_links, "evolutions": evolutions}

    def _candidates(self, notes: list[Note], vectors: dict[str, list[float]]) -> dict[str, dict[str, float]]:
        """For each note, the notes nearest it by embedding and those sharing its keywords,
        with their cosine similarity. Batched: a store call costs more than a note."""
        k = self.settings.link_k
        nearest = self.indexer.nearest_many([vectors[n.id] for n in notes], k + 1)
        similar = {n.id: dict(hits) for n, hits in zip(notes, nearest)}
        sharers = {n.id: [i for i, _ in self.index.fulltext.search(self.index.fulltext.uncommon(n.keywords, COMMON_KEYWORD), k)]
                   if n.keywords else [] for n in notes}
        missing = {i for n in notes for i in sharers[n.id] if i not in similar[n.id]}
        found = self.indexer.vectors_of(sorted(missing)) if missing else {}
        for n in notes:
            for i in sharers[n.id]:
                if i not in similar[n.id] and i in found:
                    similar[n.id][i] = cosine(vectors[n.id], found[i])
        return similar

    def propose_links(self, note: Note, similar: dict[str, float], *, exclude=()) -> list[str]:
        """The notes the new note should link to among its candidates `similar` ({id:
        cosine}), leaving out those already linked either way and those in `exclude`."""
        s = self.settings
        similar = dict(similar)
        for known in (note.id, *note.links, *note.backlinks, *exclude):
            similar.pop(known, None)
        others = self.index.notes.described(similar)
        candidates = [Candidate(i, text, context, words, similar[i]) for i, (text, context, words) in others.items()]
        decision = choose_links(note.content, note.keywords, candidates, llm=self.llm if s.link_choice == "model" else None,
                                threshold=s.link_threshold, max_links=s.max_links)
        self.stats.count(decision)
        return decision.ids

    def _apply_links(self, pairs: list[tuple[str, str]], boxes: Mapping[str, list[str]] | None = None) -> None:
        """Write links (source, target) and their backlinks, and the notes `boxes` files
        ({id: boxes}, for notes amem still holds in the inbox), each file once. A target's
        backlinks are made whole while it is written: a person's note gets its first list
        of backlinks here, with the notes that already link it."""
        boxes = boxes or {}
        links: dict[str, list[str]] = {}
        backlinks: dict[str, list[str]] = {}
        for source, target in pairs:
            links.setdefault(source, []).append(target)
            backlinks.setdefault(target, []).append(source)
        linked_from = self.index.links.linked_from(backlinks)
        backlinks = {t: [*linked_from.get(t, []), *sources] for t, sources in backlinks.items()}

        def add(note_id: str) -> Callable[[Note], Note]:
            def change(n: Note) -> Note:
                if note_id in boxes and n.filed and n.boxes == [DEFAULT_BOX]:  # not taken over meanwhile
                    n = n.filed_in(boxes[note_id])
                if note_id in links or note_id in backlinks:
                    n = replace(n, links=self.merged(n.links, links.get(note_id, [])),
                                backlinks=self.merged(n.backlinks, backlinks.get(note_id, [])))
                return n
            return change

        self.writer.update_many({i: add(i) for i in {**links, **backlinks, **boxes}}, embed=False, sync=False)
        self.stats.links += len(pairs)

    def merged(self, written: list[str], ids: list[str]) -> list[str]:
        """The links as written, then those of `ids` that none of them names already."""
        named = {*written, *self.index.links.resolve(written).values()}
        return [*written, *(i for i in dict.fromkeys(ids) if i not in named)]

    def _proposed_evolutions(self, new: Note, target_ids: list[str]) -> dict[str, dict]:
        """{linked note id: the context/tags change the model proposes for it}, decided in one
        call; left out: the notes with nothing usable, and those that may not evolve (no
        model, pinned or hand-edited)."""
        # Checked here too, not only in `connect` before it writes the backlinks: a
        # `pinned` added by hand that the vault watcher has not reported yet is not in the
        # index at that check; writing the backlinks reads each target's file, so it is here.
        target_ids = [t for t in target_ids if self._may_evolve(t)]
        found = self.index.notes.get_many(target_ids, links=False)
        targets = [found[t] for t in target_ids if t in found]
        if not targets:
            return {}
        decisions = decide_evolutions(NewNote(new.content, new.keywords, new.context), targets, llm=self.llm)
        self.stats.count(decisions)
        return {e.neighbour_id: e.changes() for e in decisions.evolutions}

    def _revise(self, target_id: str, changes: dict, cause: str) -> bool:
        """Whether the note evolved: not when a person saved it meanwhile (it is theirs now)."""
        try:
            self.writer.revise(target_id, changes, cause=cause, model=self.llm.identity)
        except ConflictError:
            return False
        self.stats.evolutions += 1
        return True

    def _may_evolve(self, note_id: str) -> bool:
        """A model that evolves notes is there, and the note is neither pinned nor a person's own version."""
        if "evolution" not in self.settings.model_fields or self.llm is None:
            return False
        note = self.index.notes.get(note_id)
        return note is not None and note.extra.get("pinned") is not True and not self.hand_edited(note_id, note)

    def hand_edited(self, note_id: str, note: Note) -> bool:
        """Has a person saved the file since amem last wrote it (its `updated` time)?"""
        stat = self.vault.stat(self.index.notes.path_of(note_id))
        if stat is None or note.updated_at is None:
            return True
        # In seconds: `updated + 2 s` does not exist at the end of the year 9999.
        return stat.mtime_ns / 1e9 > note.updated_at.timestamp() + HAND_EDIT_SLACK.total_seconds()
