"""The ONNX embedder against sentence-transformers on the real all-MiniLM-L6-v2: vectors
within cosine 0.97 (int8 weights) and the same identity, a fresh process that never imports torch, and a cache that is reused
and repaired; an int8 file that changes the vectors is not kept. The model is exported once per test session (into the session's AMEM_CACHE_DIR)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import internals
from typer.testing import CliRunner

from amem_cli import AgentMemory
from amem_cli.cli.app import app
from amem_cli.config import load_settings
from amem_cli.container import Container
from amem_cli.embed import onnx
from amem_cli.embed.onnx import OnnxEmbedder, OnnxUnavailable, export_onnx, onnx_path
from amem_cli.embed.sentence import SentenceTransformerEmbedder

pytestmark = pytest.mark.integration

IDENTITY = "sentence-transformers/all-MiniLM-L6-v2:384"
HEAVY = ("torch", "sentence_transformers", "transformers")

TEXTS = [
    "How long should I cook spaghetti?",
    "Python list comprehensions build a new list from an iterable in a single expression.",
    "",
    "   ",
    ".",
    "a",
    "我喜欢在北京吃烤鸭，尤其是在冬天。",
    "東京は日本の首都です。",
    "Party time 🎉🚀🔥 with friends 👩‍👩‍👧",
    "Ünïcödé àccents, ligatures ﬁ and ß",
    "\ttabs\nand\r\nnewlines  everywhere\n",
    # Over 256 tokens: both truncate at the model's max_seq_length.
    " ".join(f"sentence {i} about the weather, the markets and the mountains." for i in range(80)),
    "x" * 3000,
]


@pytest.fixture(scope="session")
def cache_dir(_model_cache) -> Path:
    return Path(os.environ["AMEM_CACHE_DIR"])


@pytest.fixture(scope="session")
def onnx_embedder(cache_dir) -> OnnxEmbedder:
    """Exports the model into the session cache (the one export of the session)."""
    embedder = OnnxEmbedder(cache_dir=cache_dir)
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture(scope="session")
def st_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def cosines(a, b) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_near_the_vectors_of_sentence_transformers(onnx_embedder, st_embedder):
    """int8 weights move each vector a little (measured: cosine 0.971-0.994, mean 0.985, and
    the mean moves by a few thousandths between releases of torch/onnxruntime; one scale per
    whole matrix gave 0.956); what that does to search is benchmarks/locomo.py's."""
    ours, theirs = onnx_embedder.embed(TEXTS), st_embedder.embed(TEXTS)
    assert len(ours) == len(TEXTS) and all(len(v) == 384 for v in ours)
    assert cosines(ours, theirs).min() >= 0.97
    assert cosines(ours, theirs).mean() >= 0.98
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_the_export_is_quantized(onnx_embedder, cache_dir):
    """The cached file runs its matrix products on int8 weights (what makes it ~2.8x faster)."""
    import onnx as onnx_format

    graph = onnx_format.load(str(onnx_path(cache_dir=cache_dir)), load_external_data=False).graph
    weights = {w.name for w in graph.initializer}
    products = [node for node in graph.node if node.op_type in ("MatMul", "MatMulInteger")]
    by_weight = [node.op_type for node in products if weights & set(node.input)]
    assert len(by_weight) >= 36 and set(by_weight) == {"MatMulInteger"}  # 6 layers x 6 weight matrices


@pytest.mark.parametrize("cores", [1, 3])
def test_a_text_has_one_vector_whatever_it_is_embedded_with(onnx_embedder, cache_dir, monkeypatch, cores):
    """All the texts at once, in turn or on 3 workers, against each alone: the same vectors
    (int8 runs scale their input as a whole, so texts run together would differ)."""
    monkeypatch.setattr("amem_cli.embed.onnx._cores", lambda: cores)
    together = OnnxEmbedder(cache_dir=cache_dir).embed(TEXTS)
    one_by_one = [onnx_embedder.embed([t])[0] for t in TEXTS]
    assert cosines(together, one_by_one).min() >= 0.9999


def test_identity_is_that_of_sentence_transformers(onnx_embedder, st_embedder):
    assert onnx_embedder.identity == st_embedder.identity == IDENTITY
    # And it needs no model loaded at all (read from the model folder).
    assert OnnxEmbedder()._session is None and OnnxEmbedder().identity == IDENTITY


def test_fresh_process_embeds_without_torch(onnx_embedder, tmp_path):
    """The default embedder of a fresh process, cache warm: no torch, no export, nothing on stderr."""
    probe = f"""
import json, sys
from amem_cli.config import load_settings
from amem_cli.container import Container
embedder = Container(load_settings(dir={str(tmp_path / "vault")!r}), create=True).embedder
vector = embedder.embed(["how long should I cook noodles"])[0]
print(json.dumps({{"kind": type(embedder).__name__, "identity": embedder.identity, "dims": len(vector),
                  "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    got = json.loads(res.stdout)
    assert got == {"kind": "OnnxEmbedder", "identity": IDENTITY, "dims": 384, "heavy": []}


def test_second_load_reuses_the_cache(onnx_embedder, cache_dir, monkeypatch, capfd):
    path = onnx_path(cache_dir=cache_dir)
    before = path.stat().st_mtime_ns
    monkeypatch.setattr(onnx, "_export", lambda *a: pytest.fail("exported again"))
    assert export_onnx(cache_dir=cache_dir) == path
    assert OnnxEmbedder(cache_dir=cache_dir).embed(["again"])
    assert path.stat().st_mtime_ns == before
    assert capfd.readouterr().err == ""
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp files left


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_damaged_cache_file_is_exported_again(onnx_embedder, cache_dir, tmp_path, monkeypatch, capfd, damage):
    good = onnx_path(cache_dir=cache_dir)
    path = onnx_path(cache_dir=tmp_path)
    path.parent.mkdir(parents=True)
    data = good.read_bytes()
    path.write_bytes({"truncated": data[: len(data) // 2], "garbage": b"not a model" * 100, "empty": b""}[damage])
    exports = []
    # A copy of the session's export stands in for torch and the quantizer (one real export per session).
    monkeypatch.setattr(onnx, "_export", lambda layout, out: (exports.append(out), shutil.copyfile(good, out)))
    monkeypatch.setattr(onnx, "_quantize", shutil.copyfile)
    vector = OnnxEmbedder(cache_dir=tmp_path).embed(["how long should I cook noodles"])
    assert len(exports) == 1
    assert path.read_bytes() == data
    assert cosines(vector, onnx_embedder.embed(["how long should I cook noodles"])).min() >= 0.9999
    assert capfd.readouterr().err.count("\n") == 1  # the one "preparing" line


def scrambled(model: Path, out: Path) -> Path:
    """`model` with its word vectors shuffled among the words: the same graph, other vectors."""
    import onnx as onnx_format
    from onnx import numpy_helper

    graph = onnx_format.load(str(model))
    for i, weights in enumerate(graph.graph.initializer):
        if weights.name.endswith("word_embeddings.weight"):
            rows = numpy_helper.to_array(weights)
            shuffled = rows[np.random.default_rng(0).permutation(len(rows))]
            graph.graph.initializer[i].CopyFrom(numpy_helper.from_array(shuffled, weights.name))
    onnx_format.save(graph, str(out))
    return out


def test_an_int8_export_that_changes_the_vectors_is_not_kept(onnx_embedder, cache_dir, tmp_path, monkeypatch, capfd):
    """Some models do not survive int8 (all-mpnet-base-v2: cosine ~0.05 to its own vectors):
    then the full-precision export is kept, and the user is told in one line."""
    good = onnx_path(cache_dir=cache_dir)
    strayed = scrambled(good, tmp_path / "strayed.onnx")
    monkeypatch.setattr(onnx, "_export", lambda layout, out: shutil.copyfile(good, out))
    monkeypatch.setattr(onnx, "_quantize", lambda full, out: shutil.copyfile(strayed, out))
    path = export_onnx(cache_dir=tmp_path / "cache")
    assert path.read_bytes() == good.read_bytes()
    err = capfd.readouterr().err.splitlines()
    assert err[-1].startswith("amem: int8 weights change this model's vectors") and err[-1].endswith("keeping full precision")
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp files left


def test_failed_export_falls_back_in_one_line(st_embedder, tmp_path, monkeypatch, capfd):
    def no_torch(layout, out):
        raise ModuleNotFoundError("No module named 'torch'")

    monkeypatch.setattr(onnx, "_export", no_torch)
    with pytest.raises(OnnxUnavailable) as info:
        OnnxEmbedder(cache_dir=tmp_path).embed(["noodles"])
    assert "\n" not in info.value.message and "torch" in info.value.message

    embedder = OnnxEmbedder(cache_dir=tmp_path, fallback=lambda: st_embedder)
    assert embedder.embed(["noodles"]) == st_embedder.embed(["noodles"])
    assert embedder.identity == IDENTITY
    err = capfd.readouterr().err.splitlines()
    assert err[-1].startswith("amem: cannot export") and err[-1].endswith("using sentence-transformers instead")
    assert "Traceback" not in "\n".join(err)
    assert not any(tmp_path.rglob("*.tmp"))


def test_vectors_of_either_backend_share_one_index(onnx_embedder, vault):
    """Stored by sentence-transformers, searched with the default (ONNX): no reindex needed."""
    with AgentMemory(vault, embedder="sentence-transformers") as mem:
        pasta = mem.add("To cook spaghetti, boil salted water, add the noodles and simmer them for nine minutes.")
        mem.add("Through the telescope Saturn's rings and four of Jupiter's moons were clearly visible.")
    with AgentMemory(vault) as mem:
        assert isinstance(internals(mem).embedder, OnnxEmbedder)
        hits = mem.search("how long should I cook noodles", mode="semantic")
        assert hits[0].note.id == pasta.id


def test_embedder_choice(tmp_path):
    def kind(**flags):
        return type(Container(load_settings(dir=str(tmp_path), **flags), create=True).embedder).__name__

    assert kind() == "OnnxEmbedder"
    assert kind(embedder="sentence-transformers") == "SentenceTransformerEmbedder"
    assert kind(embedder="fake") == "HashEmbedder"
    res = CliRunner().invoke(app, ["--dir", str(tmp_path), "--embedder", "word2vec", "list"])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 2 and "unknown embedder 'word2vec'" in lines[0] and "'onnx' (default)" in lines[1]


def test_without_torch(onnx_embedder, run_amem, vault, tmp_path):
    """A cached export is all the default embedder needs; without one and without torch,
    the user gets what failed in one line each, never a traceback."""
    shim = tmp_path / "shim" / "torch"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('torch is not installed (test)')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(shim.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    res = run_amem("--dir", vault, "add", "Saturn has rings", env=env)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""

    res = run_amem("--dir", vault, "add", "Jupiter has moons", env={**env, "AMEM_CACHE_DIR": str(tmp_path / "empty")})
    assert res.returncode == 1
    assert res.stderr.splitlines() == [
        "amem: preparing the embedding model for fast start (once, ~20 s)",
        "amem: cannot export the embedding model to ONNX: ImportError: torch is not installed (test); "
        "using sentence-transformers instead",
        "Error: the embedding model needs sentence-transformers and torch (torch is not installed (test))",
        "Hint: pip install sentence-transformers torch",
    ]
