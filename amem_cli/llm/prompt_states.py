"""The model states after recent prompts, so that the next prompt of the same kind starts
from the state after their shared fixed part (instructions and worked example) instead of
evaluating it again. Imported only with llama_cpp (lazily, by `llamacpp`).

Each prompt kind (construct, boxes, evolve...) opens with the same instructions and example
call after call; llama-cpp-python finds the cached state with the longest common prefix and
evaluates only what follows it. Measured with the bundled model on 1 thread: 2.19 s a call
without, 1.20 s with, the same outputs.
"""

from __future__ import annotations

from llama_cpp import LlamaRAMCache

# A state holds the KV cache of its tokens (with SmolLM2-135M about 23 kB a token, 5-10 MB a
# prompt): room for the latest prompts of each kind.
CAPACITY_BYTES = 64 << 20


class PromptStates(LlamaRAMCache):
    """llama-cpp-python's RAM cache, each state kept with the logits of its last token only.

    A state comes with the logits of every token it holds (n_tokens x vocabulary floats:
    45-85 MB a prompt with a 49k vocabulary, uncounted by the capacity; 1.1 GB of memory
    for 8 states). Only the last row is ever read again: a state taken from the cache is
    marked as needing an evaluation, and the part of the new prompt past the shared
    prefix (at least one token) is evaluated before anything is sampled.
    """

    def __init__(self, capacity_bytes: int = CAPACITY_BYTES):
        super().__init__(capacity_bytes)

    def __setitem__(self, key, value) -> None:  # type: ignore[no-untyped-def]
        value.scores = value.scores[-1:].copy()
        super().__setitem__(key, value)
