"""Embedders: a small protocol, a deterministic fake, sentence-transformers."""
