"""Embedder figures: the ONNX backend against sentence-transformers, same model.

    .venv/bin/python benchmarks/embedder.py             # 3 fresh processes per backend
    .venv/bin/python benchmarks/embedder.py --runs 1 --cache-dir ~/.cache/amem

Each run is a fresh interpreter (as each `amem` command is) that times:

- import: the backend's libraries and amem's embedder module,
- load: the first `embed` of one query (model load, session, tokenizer, one vector),
- query: a warm single-query `embed`, median of 20,
- throughput: one `embed` call over 1,000 note-like sentences (benchmarks/foundation.py's).

Medians over the runs are printed with the machine, plus the lowest cosine between the two
backends' vectors of the 1,000 sentences. The ONNX export (once per model, with torch) is
timed first, into a temp cache unless --cache-dir names one. Figures only; nothing asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

from foundation import make_notes

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = {
    "onnx": ("import numpy, onnxruntime, tokenizers\nfrom amem_cli.embed.onnx import OnnxEmbedder as E",
             "E(cache_dir=sys.argv[2])"),
    "sentence-transformers": ("import sentence_transformers\nfrom amem_cli.embed.sentence import SentenceTransformerEmbedder as E",
                              "E()"),
}

CHILD = """
import json, statistics, sys, time
t0 = time.perf_counter()
{imports}
t1 = time.perf_counter()
embedder = {make}
embedder.embed(["how long should I cook noodles"])
t2 = time.perf_counter()
query = []
for i in range(20):
    t = time.perf_counter()
    embedder.embed([f"what did Ana cook on day {{i}}"])
    query.append(time.perf_counter() - t)
sentences = json.load(open(sys.argv[1]))
t = time.perf_counter()
vectors = embedder.embed(sentences)
batch = time.perf_counter() - t
import numpy
numpy.save(sys.argv[3], numpy.asarray(vectors, dtype=numpy.float32))
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "query": statistics.median(query),
                  "throughput": len(sentences) / batch, "identity": embedder.identity}}))
"""


def run(backend: str, sentences: Path, cache: Path, vectors: Path) -> dict:
    imports, make = BACKENDS[backend]
    code = CHILD.format(imports=imports, make=make)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    res = subprocess.run([sys.executable, "-c", code, str(sentences), str(cache), str(vectors)],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f"the {backend} run failed ({res.returncode}):\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="fresh processes per backend (default 3)")
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--cache-dir", help="the ONNX cache to use (default: a temp folder, export timed)")
    args = ap.parse_args()

    load_before = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="amem-embed-bench-"))
    try:
        cache = Path(args.cache_dir).expanduser() if args.cache_dir else tmp / "cache"
        sentences = tmp / "sentences.json"
        sentences.write_text(json.dumps([n["content"] for n in make_notes(args.sentences)]))

        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-c", "import sys; from amem_cli.embed.onnx import export_onnx; "
                              "export_onnx(cache_dir=sys.argv[1])", str(cache)], env=env, capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"the ONNX export failed:\n{res.stderr}")
        export = f"{time.perf_counter() - t0:.1f} s" if "preparing" in res.stderr else "cached already"

        results: dict[str, list[dict]] = {}
        for _ in range(args.runs):  # interleaved, so a busy moment does not favour one backend
            for backend in BACKENDS:
                results.setdefault(backend, []).append(run(backend, sentences, cache, tmp / f"{backend}.npy"))
        a, b = (np.load(tmp / f"{backend}.npy") for backend in BACKENDS)
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def median(backend: str, key: str) -> float:
        return statistics.median(r[key] for r in results[backend])

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    context = [
        ("python", f"{platform.python_version()} ({platform.platform()})"),
        ("cpu", f"{cpu_model()}, {cores} cores usable"),
        ("versions", f"onnxruntime {version('onnxruntime')}, tokenizers {version('tokenizers')}, "
                     f"torch {version('torch')}, sentence-transformers {version('sentence-transformers')}"),
        # Other processes on the cores skew every figure; the load average tells how much.
        ("load average (1 min)", f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after"),
        ("model", results["onnx"][0]["identity"]),
        ("runs", f"{args.runs} fresh processes per backend, medians"),
        ("ONNX export (once per model)", export),
        ("vectors, lowest cosine", f"{cos.min():.6f} over {len(cos)} sentences"),
    ]
    print("\namem embedder benchmark")
    for k, v in context:
        print(f"  {k:<30} {v}")
    print(f"\n  {'':<24}{'import':>10}{'load':>10}{'query':>10}{'sentences/s':>14}")
    for backend in BACKENDS:
        print(f"  {backend:<24}{median(backend, 'import'):>9.2f}s{median(backend, 'load'):>9.2f}s"
              f"{median(backend, 'query') * 1000:>8.1f}ms{median(backend, 'throughput'):>14.0f}")


if __name__ == "__main__":
    main()
