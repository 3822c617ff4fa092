"""The CPU box filing takes per add: the judged set's 183 notes added one by one (as
`judged_fields.py` adds them, `--llm none`), with `time.process_time` around
`BoxFiler.file` (a note's filing, with the inbox sweep) and `BoxFiler.sweep` (its part).

    python benchmarks/box_cost.py

CPU time, not wall-clock: readable on a loaded machine.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).parent))
from judged_fields import SET  # noqa: E402


def main() -> int:
    from amem_cli import AgentMemory
    from amem_cli.services.boxes import BoxFiler

    spent = {"file": 0.0, "sweep": 0.0}

    def timed(name, method):
        def run(*args, **kwargs):
            started = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - started
        return run

    BoxFiler.file, BoxFiler.sweep = timed("file", BoxFiler.file), timed("sweep", BoxFiler.sweep)
    notes = sorted((json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()),
                   key=lambda n: n["created"])
    with tempfile.TemporaryDirectory(prefix="amem-boxcost-") as tmp, AgentMemory(tmp, llm="none") as mem:
        started = time.process_time()
        for note in notes:
            mem.add(note["text"], created_at=note["created"])
        total = time.process_time() - started
    per = 1000 / len(notes)
    print(f"{len(notes)} adds: {total * per:.1f} ms CPU per add in all; box filing {spent['file'] * per:.2f} ms, "
          f"of which the inbox sweep {spent['sweep'] * per:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
