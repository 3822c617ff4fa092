"""Pure retrieval functions: query words, the link-graph walk, list fusion. No I/O."""

from __future__ import annotations

import math

import pytest

from amem_cli.retrieve.fusion import FUSIONS, rrf, score_fusion
from amem_cli.retrieve.pagerank import neighbourhood, personalised_pagerank
from amem_cli.retrieve.query import asks_when, cjk_terms, keywords, side_asked, terms
from amem_cli.text import STOPWORDS

# -- query -------------------------------------------------------------------


def test_keywords_drop_stopwords_keep_names_and_numbers():
    assert keywords("What did Caroline do on 8 May 2023?") == ["caroline", "8", "may", "2023"]


def test_keywords_drop_punctuation():
    assert keywords("pottery, painting!!! & (camping) -- \"hiking\"?") == ["pottery", "painting", "camping", "hiking"]


def test_keywords_dedupe_in_first_order():
    assert keywords("Tea tea TEA coffee Tea") == ["tea", "coffee"]


def test_keywords_all_stopwords_keeps_every_word():
    assert keywords("What is it?") == ["what", "is", "it"]
    assert all(w in STOPWORDS for w in ("what", "is", "it"))


def test_keywords_empty_and_punctuation_only():
    assert keywords("") == []
    assert keywords("?!... ,;") == []


def test_words_lowercase_unique_in_order():
    assert terms("Bob met Alice; alice met BOB.") == ["bob", "met", "alice"]


def test_keywords_drop_possessive_and_contraction_fragments():
    assert keywords("What is Caroline's job? I don't know") == ["caroline", "job", "know"]


@pytest.mark.parametrize(
    "text",
    ["我喜欢在北京吃烤鸭", "東京タワーに行きました", "カタカナ", "ひらがな", "서울에 갔어요", "I ate 烤鸭 today"],
    ids=["chinese", "japanese-mixed", "katakana", "hiragana", "korean", "mixed"],
)
def test_cjk_text_is_found(text):
    assert cjk_terms(text)


@pytest.mark.parametrize("text", ["plain English", "café résumé naïve", "Ωμέγα", "12345", ""])
def test_no_cjk_text_is_found(text):
    assert cjk_terms(text) == []


def test_cjk_terms_chinese_one_run():
    assert cjk_terms("我喜欢在北京吃烤鸭") == ["我喜欢在北京吃烤鸭"]


def test_cjk_terms_mixed_text_split_and_deduped():
    assert cjk_terms("I ate 烤鸭 in 北京, then 烤鸭 again") == ["烤鸭", "北京"]


def test_cjk_terms_japanese_split_at_full_width_punctuation():
    # Kanji, hiragana and katakana are one run; "。" (not a CJK letter) ends it.
    assert cjk_terms("東京タワーに行きました。楽しかった！") == ["東京タワーに行きました", "楽しかった"]


def test_cjk_terms_none():
    assert cjk_terms("no cjk here") == []


def test_keywords_of_cjk_query():
    assert keywords("烤鸭") == ["烤鸭"]
    assert keywords("北京 烤鸭!") == ["北京", "烤鸭"]


@pytest.mark.parametrize("query", ["When did Caroline go to the support group?", "what year did she move?",
                                   "How long ago was her birthday?", "Which month is the recital in?",
                                   "When Jon has lost his job?", "She moved. When was that?"])
def test_a_question_about_time(query):
    assert asks_when(query)


@pytest.mark.parametrize("query", ["What did Caroline paint?", "How long has she had her friends?",
                                   "Whenever the weather is nice", "What does Melanie do on a day off?",
                                   "What did James play when he was younger?", "Who helps Caroline when she is down?",
                                   "Did she paint when she was young?"])
def test_other_questions_are_not_about_time(query):
    assert not asks_when(query)


@pytest.mark.parametrize(
    ("query", "side"),
    [
        ("What did you recommend for my trip to Lisbon?", "assistant"),
        ("Which trail have you suggested?", "assistant"),
        ("the hotel you told me about", "assistant"),
        ("What did I buy at the market?", "user"),
        ("Can you suggest a hotel for me?", "user"),  # a request asks nothing of the assistant's words
        ("my bikes", "user"),
        ("When did Caroline go to the support group?", None),
        ("Did Melanie paint?", None),
    ],
)
def test_the_side_of_a_chat_a_question_asks_about(query, side):
    assert side_asked(query) == side


# -- graph: neighbourhood --------------------------------------------------------

CHAIN = {"a": {"b"}, "b": {"a", "c"}, "c": {"b", "d"}, "d": {"c", "e"}, "e": {"d"}}


def fetcher(graph, calls=None):
    def adjacency(ids):
        ids = list(ids)
        if calls is not None:
            calls.append(sorted(ids))
        return {i: set(graph.get(i, set())) for i in ids}

    return adjacency


def test_neighbourhood_one_hop():
    assert neighbourhood(["a"], fetcher(CHAIN), 1) == {"a": {"b"}, "b": set()}


def test_neighbourhood_two_hops_fetches_hop_by_hop():
    calls: list = []
    got = neighbourhood(["a"], fetcher(CHAIN, calls), 2)
    assert got == {"a": {"b"}, "b": {"a", "c"}, "c": set()}  # c is at the edge: no edges fetched
    assert calls == [["a"], ["b"]]


def test_neighbourhood_from_the_middle():
    assert neighbourhood(["c"], fetcher(CHAIN), 1) == {"c": {"b", "d"}, "b": set(), "d": set()}


def test_neighbourhood_zero_hops_is_empty():
    calls: list = []
    assert neighbourhood(["a"], fetcher(CHAIN, calls), 0) == {}
    assert calls == []


def test_neighbourhood_stops_when_nothing_new():
    triangle = {"a": {"b", "c"}, "b": {"a", "c"}, "c": {"a", "b"}}
    calls: list = []
    assert neighbourhood(["a"], fetcher(triangle, calls), 10) == triangle
    assert calls == [["a"], ["b", "c"]]


def test_neighbourhood_unknown_seed():
    assert neighbourhood(["zzz"], fetcher(CHAIN), 3) == {"zzz": set()}


# -- graph: personalised PageRank ----------------------------------------------


def test_pagerank_sums_to_one():
    graph = {**CHAIN, "x": {"y"}, "y": {"x"}, "dead": set()}
    rank = personalised_pagerank(graph, {"a": 2.0, "x": 1.0, "dead": 1.0})
    assert math.isclose(sum(rank.values()), 1.0, rel_tol=1e-9)
    assert all(p >= 0 for p in rank.values())


def test_pagerank_seed_ranks_above_far_nodes():
    rank = personalised_pagerank(CHAIN, {"a": 1.0})
    assert rank["a"] > rank["c"] > rank["d"] > rank["e"]
    assert sorted(rank, key=rank.get, reverse=True)[:2] == ["b", "a"]  # b: the seed's only neighbour


def test_pagerank_heavier_seed_wins():
    rank = personalised_pagerank(CHAIN, {"a": 3.0, "e": 1.0})
    assert rank["a"] > rank["e"]
    assert rank["b"] > rank["d"]


def test_pagerank_zero_iterations_is_the_teleport_vector():
    assert personalised_pagerank(CHAIN, {"a": 3.0, "c": 1.0}, iterations=0) == {"a": 0.75, "c": 0.25}


def test_pagerank_zero_damping_never_leaves_the_seeds():
    rank = personalised_pagerank(CHAIN, {"a": 1.0, "c": 1.0}, damping=0.0, iterations=5)
    assert {n: p for n, p in rank.items() if p} == {"a": 0.5, "c": 0.5}


def test_pagerank_one_iteration_exact():
    graph = {"a": {"b"}, "b": {"a"}}
    assert personalised_pagerank(graph, {"a": 1.0}, damping=0.85, iterations=1) == pytest.approx({"a": 0.15, "b": 0.85})
    assert personalised_pagerank(graph, {"a": 1.0}, damping=0.5, iterations=1) == pytest.approx({"a": 0.5, "b": 0.5})
    # Two steps: b's mass walks back to a.
    two = personalised_pagerank(graph, {"a": 1.0}, damping=0.5, iterations=2)
    assert two == pytest.approx({"a": 0.5 + 0.5 * 0.5, "b": 0.5 * 0.5})


def random_graph(rng, n: int, edges: int, *, undirected: bool) -> dict[str, set[str]]:
    """`n` nodes in two parts with no edge between them, some nodes with no edges out."""
    graph: dict[str, set[str]] = {f"n{i}": set() for i in range(n)}
    half = n // 2
    for _ in range(edges):
        part = range(half) if rng.random() < 0.5 else range(half, n)
        a, b = (f"n{i}" for i in rng.choices(part, k=2))  # a self-loop now and then
        graph[a].add(b)
        if undirected:
            graph[b].add(a)
    for dangling in rng.sample(sorted(graph), k=max(1, n // 5)):
        graph[dangling] = set()  # a dead end (its in-edges stay)
    return graph


@pytest.mark.parametrize("n", [2, 5, 12, 40, 150])
@pytest.mark.parametrize("undirected", [True, False])
@pytest.mark.parametrize("damping", [0.85, 0.5])
def test_pagerank_equals_networkx_personalised_pagerank(n, undirected, damping):
    """The hand-written power iteration is personalised PageRank: networkx's, with
    dead ends jumping back to the seeds (its default for `dangling`)."""
    import random

    import networkx as nx

    rng = random.Random(n * 1000 + undirected * 10 + int(damping * 100))
    graph = random_graph(rng, n, edges=2 * n, undirected=undirected)
    seeds = {node: rng.choice([0.5, 1.0, 3.0]) for node in rng.sample(sorted(graph), k=max(1, n // 4))}
    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((a, b) for a, out in graph.items() for b in out)
    expected = nx.pagerank(g, alpha=damping, personalization=seeds, max_iter=10_000, tol=1e-15)
    rank = personalised_pagerank(graph, seeds, damping=damping, iterations=400)
    assert max(abs(rank.get(node, 0.0) - p) for node, p in expected.items()) < 1e-9  # ~1e-14 today
    assert set(rank) <= set(expected)


def test_pagerank_iterations_change_the_result():
    one = personalised_pagerank(CHAIN, {"a": 1.0}, iterations=1)
    many = personalised_pagerank(CHAIN, {"a": 1.0}, iterations=50)
    assert "c" not in one  # one step reaches only b
    assert many["c"] > 0
    assert one != pytest.approx(many)


def test_pagerank_converges_to_personalised_pagerank():
    """Each step brings the walk nearer personalised PageRank (networkx's, computed to
    1e-15), which 200 steps reach; the default 20 stop on the way."""
    import networkx as nx

    g = nx.Graph([(a, b) for a, out in CHAIN.items() for b in out])
    truth = nx.pagerank(g, alpha=0.85, personalization={"a": 1.0}, max_iter=10_000, tol=1e-15)

    def off(rank: dict[str, float]) -> float:
        return max(abs(rank.get(node, 0.0) - p) for node, p in truth.items())

    distances = [off(personalised_pagerank(CHAIN, {"a": 1.0}, iterations=k)) for k in (5, 10, 20, 50, 200)]
    assert distances == sorted(distances, reverse=True) and distances[-1] < 1e-12
    assert 1e-6 < off(personalised_pagerank(CHAIN, {"a": 1.0})) == distances[2]  # the default: 20 steps


def test_pagerank_isolated_seed_keeps_all_mass():
    assert personalised_pagerank({"a": set()}, {"a": 1.0}) == pytest.approx({"a": 1.0})
    # a seed missing from the graph is a dead end too
    assert personalised_pagerank({}, {"a": 5.0}) == pytest.approx({"a": 1.0})


def test_pagerank_dead_end_returns_mass_to_seeds():
    graph = {"a": {"b"}, "b": set()}  # b at the neighbourhood's edge
    rank = personalised_pagerank(graph, {"a": 1.0}, damping=0.5, iterations=2)
    # step 1: a=.5, b=.5; step 2: a=.5 + .5*.5 (lost by b) = .75, b=.5*.5 = .25
    assert rank == pytest.approx({"a": 0.75, "b": 0.25})


@pytest.mark.parametrize("seeds", [{}, {"a": 0.0}, {"a": -1.0, "b": 0.0}], ids=["none", "zero", "non-positive"])
def test_pagerank_no_usable_seeds(seeds):
    assert personalised_pagerank(CHAIN, seeds) == {}
    assert personalised_pagerank({}, seeds) == {}


def test_pagerank_ignores_non_positive_seed_weights():
    rank = personalised_pagerank({}, {"a": 1.0, "b": -3.0, "c": 0.0}, iterations=0)
    assert rank == {"a": 1.0}


# -- fusion --------------------------------------------------------------------


def test_rrf_default_k():
    fused = rrf({"keyword": [("x", 9.0), ("y", 1.0)]})
    assert [(i, s) for i, s, _ in fused] == [("x", pytest.approx(1 / 61)), ("y", pytest.approx(1 / 62))]


def test_rrf_k_and_weights():
    lists = {"keyword": [("x", 1.0), ("y", 0.5)], "semantic": [("y", 0.9), ("z", 0.1)]}
    weights = {"keyword": 2.0, "semantic": 1.5}
    fused = rrf(lists, k=0, weights=weights)
    assert dict((i, s) for i, s, _ in fused) == pytest.approx({"x": 2 / 1, "y": 2 / 2 + 1.5 / 1, "z": 1.5 / 2})
    assert [i for i, _, _ in fused] == ["y", "x", "z"]


def test_rrf_k_trades_a_single_top_rank_against_agreement():
    # x is first in one list; y is third in both.
    lists = {"keyword": [("x", 1.0), ("p", 0.5), ("y", 0.1)], "semantic": [("q", 1.0), ("r", 0.5), ("y", 0.1)]}
    assert [i for i, _, _ in rrf(lists, k=0)] == ["q", "x", "y", "p", "r"]  # 1, 1, 2/3, 1/2, 1/2
    assert [i for i, _, _ in rrf(lists, k=60)][0] == "y"  # 2/63 > 1/61


def test_rrf_uses_ranks_not_scores():
    a = rrf({"l": [("x", 1000.0), ("y", 0.001)]})
    b = rrf({"l": [("x", 2.0), ("y", 1.9)]})
    assert [(i, s) for i, s, _ in a] == [(i, s) for i, s, _ in b]


def test_rrf_missing_weight_defaults_to_one():
    fused = rrf({"keyword": [("x", 1.0)], "graph": [("x", 1.0)]}, k=1, weights={"keyword": 0.5})
    assert fused[0][1] == pytest.approx(0.5 / 2 + 1 / 2)


def test_score_fusion_normalises_each_list_by_its_best():
    fused = score_fusion({"keyword": [("x", 8.0), ("y", 2.0)]})
    assert [(i, s) for i, s, _ in fused] == [("x", 1.0), ("y", 0.25)]


def test_score_fusion_scale_of_a_list_does_not_matter():
    small = {"keyword": [("x", 10.0), ("y", 5.0), ("z", 1.0)], "semantic": [("z", 0.9), ("y", 0.3)]}
    big = {"keyword": [("x", 1e6), ("y", 5e5), ("z", 1e5)], "semantic": [("z", 0.9), ("y", 0.3)]}
    a = [(i, s) for i, s, _ in score_fusion(small)]
    b = [(i, s) for i, s, _ in score_fusion(big)]
    assert [i for i, _ in a] == [i for i, _ in b]
    assert [s for _, s in a] == pytest.approx([s for _, s in b])


def test_score_fusion_lists_of_different_scales_weigh_the_same():
    lists = {"keyword": [("x", 100.0), ("y", 50.0)], "semantic": [("y", 0.2), ("x", 0.1)]}
    fused = score_fusion(lists)
    assert [(i, s) for i, s, _ in fused] == [("x", pytest.approx(1.5)), ("y", pytest.approx(1.5))]


def test_score_fusion_negative_scores_shift_to_zero():
    fused = score_fusion({"l": [("x", -1.0), ("y", -2.0), ("z", -3.0)]})
    assert [(i, s) for i, s, _ in fused] == [("x", 1.0), ("y", 0.5), ("z", 0.0)]


def test_score_fusion_all_zero_scores_do_not_divide_by_zero():
    fused = score_fusion({"l": [("x", 0.0), ("y", 0.0)]})
    assert [(i, s) for i, s, _ in fused] == [("x", 0.0), ("y", 0.0)]


def test_score_fusion_weights():
    lists = {"keyword": [("x", 1.0), ("y", 0.5)], "semantic": [("y", 1.0), ("x", 0.5)]}
    fused = dict((i, s) for i, s, _ in score_fusion(lists, weights={"keyword": 1.0, "semantic": 0.5}))
    assert fused == pytest.approx({"x": 1.0 + 0.25, "y": 0.5 + 0.5})


def test_score_fusion_weight_zero_removes_a_list():
    keyword = [("x", 3.0), ("y", 2.0), ("z", 1.0)]
    semantic = [("z", 1.0), ("w", 0.9), ("y", 0.8)]
    alone = score_fusion({"keyword": keyword})
    muted = score_fusion({"keyword": keyword, "semantic": semantic}, weights={"keyword": 1.0, "semantic": 0.0})
    assert [(i, s) for i, s, _ in muted][:3] == [(i, s) for i, s, _ in alone]
    assert muted[3][:2] == ("w", 0.0)  # only in the muted list: present, but scores nothing
    # with its weight back, the semantic list reorders things
    assert [i for i, _, _ in score_fusion({"keyword": keyword, "semantic": semantic})] == ["y", "z", "x", "w"]


@pytest.mark.parametrize("fuse", [rrf, score_fusion], ids=["rrf", "score"])
def test_explain_has_rank_and_score_per_list(fuse):
    lists = {"keyword": [("x", 3.5), ("y", 1.25)], "semantic": [("y", 0.123456789)]}
    explain = {i: e for i, _, e in fuse(lists)}
    assert explain == {
        "x": {"keyword": {"rank": 1, "score": 3.5}},
        "y": {"keyword": {"rank": 2, "score": 1.25}, "semantic": {"rank": 1, "score": 0.123457}},
    }


@pytest.mark.parametrize("fuse", [rrf, score_fusion], ids=["rrf", "score"])
def test_ties_break_by_id(fuse):
    forward = {"l": [("b", 1.0), ("a", 1.0)], "m": [("a", 1.0), ("b", 1.0)]}
    backward = {"m": [("b", 1.0), ("a", 1.0)], "l": [("a", 1.0), ("b", 1.0)]}
    for lists in (forward, backward):
        fused = fuse(lists)
        assert [i for i, _, _ in fused] == ["a", "b"]
        assert fused[0][1] == pytest.approx(fused[1][1])
    assert fuse(forward) == fuse(forward)


@pytest.mark.parametrize("fuse", [rrf, score_fusion], ids=["rrf", "score"])
def test_fusion_of_nothing(fuse):
    assert fuse({}) == []
    assert fuse({"keyword": [], "semantic": []}) == []


def test_fusions_registry():
    assert FUSIONS == {"rrf": rrf, "score": score_fusion}


@pytest.mark.parametrize("fuse", [rrf, score_fusion])
def test_each_lists_score_is_kept_to_six_significant_digits_not_six_decimals(fuse):
    """A small vault's BM25 scores are about 1e-6 (FTS5's floor on a word's IDF): rounded
    to six decimals they read 0 or 1e-06 whatever they were."""
    (_, _, explain), _ = fuse({"keyword": [("a", 1.234567e-7), ("b", 1e-8)]})
    assert explain["keyword"] == {"rank": 1, "score": 1.23457e-7}
