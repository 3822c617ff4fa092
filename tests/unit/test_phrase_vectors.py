"""Keyword extraction keeps the vectors of candidate phrases from batch to batch
(`PhraseVectors`): a phrase seen before is not embedded again, and the keywords are the
same as without them."""

from __future__ import annotations

from amem_cli.embed.fake import HashEmbedder
from amem_cli.steps.construct import BatchedEmbedder, PhraseVectors, candidate_phrases, construct, extract_keywords

NOTES = [
    "Caroline painted the bright mural at the community centre on Friday.",
    "Melanie ran the charity race for the community centre on Friday.",
    "Caroline and Melanie met at the community centre to plan the bright mural.",
]


class Counting(HashEmbedder):
    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += texts
        return super().embed(texts)


def test_a_phrase_of_an_earlier_batch_is_not_embedded_again():
    embedder, phrases = Counting(), PhraseVectors()
    BatchedEmbedder(embedder, NOTES[:1], phrases)
    embedder.texts.clear()
    BatchedEmbedder(embedder, NOTES[1:2], phrases)
    again = set(candidate_phrases(NOTES[0])) & set(candidate_phrases(NOTES[1]))
    assert again >= {"community centre", "Friday"}
    assert not again & set(embedder.texts)
    assert NOTES[1] in embedder.texts  # a note's own text is not kept: it does not recur


def test_a_transcripts_keywords_ask_nothing_beyond_the_batch():
    """The batch embeds the text as keyword extraction ranks it, without the speaker
    labels: else each transcript note cost two more runs of the model."""
    embedder = Counting()
    transcript = "user: Caroline painted the bright mural on Friday.\nassistant: Tell me about the mural."
    batch = BatchedEmbedder(embedder, [transcript])
    embedder.texts.clear()
    assert construct(transcript, embedder=batch, model_fields=()).keywords
    assert embedder.texts == []


def test_the_keywords_are_those_of_a_batch_alone():
    embedder, phrases = HashEmbedder(), PhraseVectors()
    for note in NOTES:
        kept = BatchedEmbedder(embedder, [note], phrases)
        assert extract_keywords(note, kept) == extract_keywords(note, BatchedEmbedder(embedder, [note]))


def test_the_least_recently_used_go_first_and_another_model_starts_afresh():
    embedder, phrases = HashEmbedder(), PhraseVectors(size=2)
    phrases.keep(embedder, {"alpha": [1.0], "beta": [2.0]})
    assert phrases.take(embedder, ["alpha"]).keys() == {"alpha"}  # alpha used last
    phrases.keep(embedder, {"gamma": [3.0]})
    assert phrases.take(embedder, ["alpha", "beta", "gamma"]).keys() == {"alpha", "gamma"}

    class Other(HashEmbedder):
        identity = "another-model:8"

    assert phrases.take(Other(), ["alpha", "gamma"]) == {}
