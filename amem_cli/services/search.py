"""Hybrid retrieval: keyword (FTS5 BM25), semantic (vectors) and graph (personalised
PageRank over links and sequence links) evidence, fused into one ranking."""

from __future__ import annotations

import copy
import heapq
import re
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from ..limits import MAX_RESULTS, check_count, check_query
from ..errors import UsageError
from ..index.filters import NoteFilter
from ..models import SearchHit
from ..retrieve import MODES
from ..retrieve.fusion import FUSIONS
from ..retrieve.pagerank import neighbourhood, personalised_pagerank
from ..index.sqlite import SqliteIndex
from ..retrieve.query import asks_when, keywords, side_asked, substring_terms, terms, unsearchable
from ..text import ASSISTANT_ROLES, USER_ROLES
from ..time_phrases import StatedTime, named_times
from ..timeutil import now as current_time
from ..timeutil import to_utc
from .indexer import Indexer
from .supersession import current_first

CACHED_RESULTS = 128
CACHED_QUERY_VECTORS = 512
SUBSTRING_WORDS = 3  # queries of at most this many words are also looked for as typed


@dataclass(frozen=True)
class RetrievalSettings:
    fusion: str = "score"  # "score" (normalised scores) or "rrf" (reciprocal ranks)
    # The semantic list weighs as much as the others: at 0.5 (chosen on LoCoMo alone),
    # LongMemEval's MRR was 0.040 lower [0.007, 0.085] and LoCoMo's recall@10 0.010
    # higher [-0.005, 0.025] (multi-hop 0.029 lower); both datasets, --llm none.
    weights: dict[str, float] = field(default_factory=lambda: {"keyword": 1.0, "semantic": 1.0, "graph": 1.0})
    pagerank_damping: float = 0.85
    pagerank_iterations: int = 20
    graph_seeds: int = 10  # best fused hits that seed the walk
    graph_hops: int = 2
    name_boost: float = 0.6  # extra share of score for notes by a person the query names (0: the name stays in the vector)
    time_boost: float = 0.5  # extra share of score for notes of the time a question names, or stating a time it asks for
    neighbour_share: float = 0.5  # share of a hit's score its sequence neighbours inherit
    diversity: float = 0.4  # score share a note loses for each sequence neighbour ranked above it
    depth: int = 100  # how deep each list is read
    # The floor (`_floor`) under what `search(..., floor=True)` shows.
    min_similarity: float = 0.2  # cosine at which a note shares meaning with the query (see `_floor`)
    min_share: float = 0.1  # of the best hit's score: a hit an order of magnitude weaker is not shown


class SearchService:
    def __init__(self, index: SqliteIndex, indexer: Indexer, settings: RetrievalSettings | None = None):
        self.index = index
        self.indexer = indexer
        self.settings = settings or RetrievalSettings()
        if self.settings.fusion not in FUSIONS:
            raise UsageError(f"unknown fusion {self.settings.fusion!r}", hint=f"use one of: {', '.join(FUSIONS)}")
        # What a long-lived process (the server, the API) has already worked out.
        self._query_vectors: dict[str, list[float]] = {}  # the model does not change: never stale
        self._results: OrderedDict[tuple, list[tuple[str, float, dict]]] = OrderedDict()
        self._speakers: tuple[tuple, dict[str, str]] = ((), {})  # (index generation, speakers)
        # The query is embedded on this thread while SQLite answers the keyword list: both
        # leave the GIL, and on two cores that takes the model's ~6 ms off each search.
        # Its own thread: an import's batches on the indexer's would hold a query up.
        self._query_thread: ThreadPoolExecutor | None = None

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: str = "hybrid",
        tags: list[str] | None = None,
        boxes: list[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        floor: bool = False,
        now: datetime | None = None,
        as_of: datetime | None = None,
        include_expired: bool = False,
    ) -> list[SearchHit]:
        """The best `limit` notes for the query, best first. `floor`: only notes the query
        matched (see `_floor`), so fewer than `limit` or none; a query of only common
        words ("a", "what is it") then finds nothing (`unsearchable` says why). `now`:
        when the query is asked (default: the current time); the times it names ("four
        weeks ago", "last Tuesday") are read against it.

        A note that supersedes a hit ranks just above it (`supersession.current_first`),
        and each hit says what it replaces and what replaced it. `as_of`: as things stood
        then (notes created later, and their supersessions, do not count). Notes expired
        (by `as_of`, else now) are left out unless `include_expired`."""
        if not query or not query.strip():
            raise UsageError("the query is empty", hint="give some words to search for")
        if mode not in MODES:
            raise UsageError(f"unknown search mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
        check_query(query)
        check_count("limit", limit, 1, MAX_RESULTS)
        if floor and unsearchable(query):
            return []
        self.indexer.sync()
        if mode != "keyword":
            self.indexer.flush_vectors()
        if as_of is not None:
            until = as_of if until is None or to_utc(as_of) < to_utc(until) else until
        hidden = frozenset() if include_expired else frozenset(self.index.notes.expired(as_of or current_time()))
        filters = NoteFilter(tuple(tags or ()), tuple(boxes or ()), since, until)
        times, topic = named_times(query, now or current_time())
        # A repeated search is answered from memory until anything is written to the index.
        # (The ranking is kept, not the notes: each caller gets notes of its own.)
        key = (query, limit, mode, filters, floor, hidden, tuple(times), self.index.generation())
        if key in self._results:
            self._results.move_to_end(key)
            ranked = self._results[key]
        else:
            asked = Asked(query, topic if terms(topic) else query, times)
            ranked = self._results[key] = self._rank(asked, limit, mode, filters, floor, hidden)
            if len(self._results) > CACHED_RESULTS:
                self._results.popitem(last=False)
        notes = self.index.notes.get_many(i for i, _, _ in ranked)
        hits = [SearchHit(notes[i], score, copy.deepcopy(sources)) for i, score, sources in ranked if i in notes]

        def allowed(ids):  # a newer note brought in passes the filters too
            ok = {i for i in ids if i not in hidden}
            return ok & self.index.notes.ids_matching(filters) if filters else ok

        return current_first(hits, self.index, as_of=as_of, limit=limit, allowed=allowed)

    def _rank(self, asked: "Asked", limit, mode, filters: NoteFilter, floor, hidden: frozenset[str]) -> list[tuple[str, float, dict]]:
        """The best `limit` ids, each with its fused score and what each list said of it;
        none of `hidden` (expired notes)."""
        s = self.settings
        query = asked.query
        allowed = self.index.notes.ids_matching(filters) if filters else None
        if hidden:
            allowed = (allowed if allowed is not None else set(self.index.notes.ids())) - hidden
        depth = max(limit * 5, s.depth)
        fuse = FUSIONS[s.fusion]

        lists: dict[str, list[tuple[str, float]]] = {}
        named = self._named(query)
        side = self._side(query, named)
        topic = self._topic(asked.topic, named)
        vector = self._query_vector(topic) if mode != "keyword" else None
        if mode != "semantic":
            lists["keyword"] = self.index.fulltext.search(keywords(asked.topic), depth, filters)
            # The query as typed, for what words miss (a cut word, symbols, CJK). Only for
            # short queries or when the words found nothing: a long question's trigrams
            # cost ~30 ms at 10k notes, and its words find it anyway.
            if len(query.split()) <= SUBSTRING_WORDS or not lists["keyword"]:
                lists["substring"] = self.index.fulltext.substrings(substring_terms(query), depth, filters)
            if hidden:
                lists = {name: [(i, v) for i, v in found if i not in hidden] for name, found in lists.items()}
        if mode != "keyword":
            lists["semantic"] = self._semantic(topic, vector, depth, allowed)
        matched = self._matched(lists) if floor else None
        if mode in ("hybrid", "graph"):
            first = fuse(lists, weights=s.weights)[: s.graph_seeds]
            graph = self._graph({i: score for i, score, _ in first}, depth, allowed)
            lists = {"graph": graph} if mode == "graph" else {**lists, "graph": graph}

        fused = fuse(lists, weights=s.weights)[: max(depth, limit)]
        around = self.index.notes.sequence_neighbours(i for i, _, _ in fused)
        if mode == "hybrid":
            fused = self._spread(fused, around, allowed)
        spread = {i: score for i, score, _ in fused}
        ranked = self._diversify(self._boost_dated(asked, self._boost_speakers(named, side, fused)), around, spread)
        return (ranked if matched is None else self._floor(ranked, matched))[:limit]

    def _matched(self, lists: dict[str, list[tuple[str, float]]]) -> set[str]:
        """The notes the query itself matched: a word of it is in them (the keyword and
        substring lists), or their vector is close to its vector. Close: a cosine of at
        least `min_similarity`; with the default MiniLM, 99% of pairs of unrelated texts
        score below 0.2 (the example vault's notes against LoCoMo's questions: median
        0.04, 99th percentile 0.20). The fused score cannot tell this: each list is scaled
        by its own best, so the nearest of unrelated notes scores as if it were close."""
        found = {i for name in ("keyword", "substring") for i, _ in lists.get(name, ())}
        return found | {i for i, s in lists.get("semantic", ()) if s >= self.settings.min_similarity}

    def _floor(self, ranked: list, matched: set[str]) -> list:
        """The hits that mean something, best first: the query matched the note, or a note
        it matched and this one are linked (a link, or next to each other in a sequence:
        the reply after a matching question); and the hit scores at least `min_share` of
        the best one's score. Without a note the query matched, none at all. What the
        fusion only pads the ranking with (no word in common, a weak similarity, no link
        to a match) is left out rather than shown at the bottom."""
        if not matched:
            return []
        best = max(score for _, score, _ in ranked) if ranked else 0.0
        strong = [t for t in ranked if t[1] >= self.settings.min_share * best]
        others = [i for i, _, _ in strong if i not in matched]
        linked = self.index.links.adjacency(others) if others else {}
        return [t for t in strong if t[0] in matched or linked.get(t[0], set()) & matched]

    def _known_speakers(self) -> dict[str, str]:
        """The vault's speakers, lower-cased name -> name (remembered until the index changes)."""
        generation = self.index.generation()
        if self._speakers[0] != generation:
            self._speakers = (generation, self.index.notes.speakers())
        return self._speakers[1]

    def _named(self, query: str) -> list[str]:
        """The speakers the query names, when the name boost is on (else none)."""
        if self.settings.name_boost <= 0:
            return []
        speakers = self._known_speakers()
        return list(dict.fromkeys(speakers[w] for w in terms(query) if w in speakers))

    def _side(self, query: str, named: list[str]) -> list[str]:
        """In a chat, the roles (as the vault writes them) of the side the query asks about
        ("what did you recommend?": the assistant's; "what did I buy?": the user's;
        `side_asked`), when the name boost is on (else none); none of `named` (`_named`)."""
        side = side_asked(query) if self.settings.name_boost > 0 else None
        if side is None:
            return []
        speakers = self._known_speakers()
        roles = USER_ROLES if side == "user" else ASSISTANT_ROLES
        return [speakers[r] for r in roles if r in speakers and speakers[r] not in named]

    @staticmethod
    def _topic(query: str, named: list[str]) -> str:
        """What the query's vector is made from: the query without the names of the people
        it names (`named`, whom the name boost stands for), unless nothing else is left.
        The boost says whose notes; what they are about is for the vector. Left in, a
        name draws the vector to the notes that name the person (a reply "Thanks,
        Melanie!" by someone else) before the notes on what is asked (LoCoMo dev, --llm
        none: multi-hop recall@10 0.43 -> 0.49)."""
        if not named:
            return query
        names = "|".join(re.escape(n) for n in named)
        rest = " ".join(re.sub(rf"\b(?:{names})(?:['’]s)?\b", " ", query, flags=re.IGNORECASE).split())
        return rest if terms(rest) else query

    def _query_vector(self, text: str) -> Future:
        """The vector of the text: remembered, or on its way from the model."""
        done: Future = Future()
        if (known := self._query_vectors.get(text)) is not None:
            done.set_result(known)
            return done
        if self._query_thread is None:
            self._query_thread = ThreadPoolExecutor(1, thread_name_prefix="amem-query")
        return self._query_thread.submit(lambda: self.indexer.embedder().embed([text])[0])

    def _semantic(self, text: str, pending: Future, depth: int, allowed: set[str] | None) -> list[tuple[str, float]]:
        vector = self._query_vectors[text] = pending.result()
        if len(self._query_vectors) > CACHED_QUERY_VECTORS:
            del self._query_vectors[next(iter(self._query_vectors))]  # the oldest
        hits = self.indexer.nearest(vector, depth if allowed is None else depth * 4)
        known = self.index.notes.existing(i for i, _ in hits)
        return [(i, s) for i, s in hits if i in known and (allowed is None or i in allowed)][:depth]

    def _graph(self, seeds: dict[str, float], depth: int, allowed: set[str] | None) -> list[tuple[str, float]]:
        if not seeds:
            return []
        s = self.settings
        graph = neighbourhood(seeds, self.index.links.adjacency, s.graph_hops)
        rank = personalised_pagerank(graph, seeds, damping=s.pagerank_damping, iterations=s.pagerank_iterations)
        ranked = sorted(((i, p) for i, p in rank.items() if allowed is None or i in allowed), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:depth]

    def _spread(self, fused: list, around: dict[str, set[str]], allowed: set[str] | None) -> list:
        """A note's sequence neighbours are part of its context: a question's answer comes
        after it, a reply ("Yes, last Tuesday!") means little without what came before.
        Each note gains `neighbour_share` of its best-scoring neighbour's fused score, so a
        hit lifts the turns around it (notes outside the filters excepted). Hybrid mode
        only: the single-list modes show one list's own evidence. `around` (each note's
        neighbours) gains the notes brought in."""
        share = self.settings.neighbour_share
        if share <= 0 or not fused:
            return fused
        scores = {i: score for i, score, _ in fused}
        sources = {i: src for i, _, src in fused}
        best: dict[str, tuple[float, str]] = {}  # note -> (its gain, the neighbour it comes from)
        for i, score in list(scores.items()):
            for n in around.get(i, ()):
                if (allowed is None or n in allowed) and share * score > best.get(n, (0.0, ""))[0]:
                    best[n] = (share * score, i)
        around.update(self.index.notes.sequence_neighbours(n for n in best if n not in scores))  # only notes that exist
        for n, (gain, source) in best.items():
            if n in around:
                scores[n] = scores.get(n, 0.0) + gain
                sources[n] = {**sources.get(n, {}), "neighbour": {"of": source, "gain": round(gain, 6)}}
        out = [(i, score, sources[i]) for i, score in scores.items()]
        return sorted(out, key=lambda t: (-t[1], t[0]))

    def _boost_speakers(self, named: list[str], side: list[str], fused: list) -> list:
        """Notes said by a person the query names (`named`), and in a chat the turns of the
        side it asks about (`side`), move up (by `name_boost` of their score)."""
        boost, ids = self.settings.name_boost, [i for i, _, _ in fused]
        fused = _boost(fused, self.index.notes.speaker_notes(named, ids), boost, "name")
        return _boost(fused, self.index.notes.speaker_notes(side, ids), boost, "side")

    def _boost_dated(self, asked: "Asked", fused: list) -> list:
        """Notes of the time the query names ("four weeks ago", "in May 2023") move up, by
        `time_boost` of their score; and for a question about time ("when did ...?"),
        notes whose text states a time ("yesterday", "last Tuesday", "8 May 2023"): the
        answer is the note that dates the event, not one that only mentions it."""
        boost = self.settings.time_boost
        if boost <= 0:
            return fused
        ids = [i for i, _, _ in fused]
        if asked.times:
            fused = _boost(fused, self.index.notes.dated_within(ids, (t.span() for t in asked.times)), boost, "dated")
        if asks_when(asked.query):
            fused = _boost(fused, self.index.notes.stating_times(ids), boost, "time")
        return fused

    def _diversify(self, fused: list, around: dict[str, set[str]], spread: dict[str, float]) -> list:
        """Adjacent turns say much the same: a note loses a share of its score for each
        sequence neighbour already ranked above it, so the top spreads over more moments.
        Not for a chat turn of the side the query asks about that is above it only by the
        share of its score the turn inherited (`_spread`, `spread`: the scores then) and
        was lifted with (`_boost_speakers`): the side asked decides which of the two
        comes first, not that the other falls. (It did: "the designation on my jumpsuit",
        in a role-play where the assistant wears it, asks for the user's side; the answer
        was first or second in every list, the two user turns around it went above it
        so, and it fell to 12th.) `around`: each note's sequence neighbours."""
        share = self.settings.diversity
        if share <= 0 or not fused:
            return fused
        heap = [(-score, i, 0, score, sources) for i, score, sources in fused]
        heapq.heapify(heap)
        chosen: list = []
        taken: dict[str, tuple[str | None, float]] = {}  # note -> (the neighbour it inherited from, its score without)
        while heap:
            neg, i, seen, score, sources = heapq.heappop(heap)
            near = sum(1 for n in around.get(i, ()) if n in taken and not (taken[n][0] == i and taken[n][1] < score))
            if near > seen:  # a neighbour was taken since this score was set: re-rank it
                heapq.heappush(heap, (-score * (1 - share) ** near, i, near, score, sources))
                continue
            chosen.append((i, -neg, sources))
            given = sources.get("neighbour") if "side" in sources else None
            taken[i] = (given["of"], score * (1 - given["gain"] / spread[i])) if given else (None, 0.0)
        return chosen


@dataclass(frozen=True)
class Asked:
    """A query as search reads it: as typed; its topic (the query without the phrases
    naming a time, which are searched as time, not as words); the times it names."""

    query: str
    topic: str
    times: list[StatedTime]


def _boost(fused: list, chosen: set[str], boost: float, reason: str) -> list:
    """The chosen notes' scores raised by `boost` of themselves (their sources say why), re-ranked."""
    if not chosen:
        return fused
    out = []
    for i, score, sources in fused:
        if i in chosen:
            score *= 1 + boost
            sources = {**sources, reason: {"boost": boost}}
        out.append((i, score, sources))
    return sorted(out, key=lambda t: (-t[1], t[0]))
