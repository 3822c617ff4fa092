"""SIGKILL `amem` at random moments during add, evolve, import and reindex (the harness
is tests/reliability/crashes.py; benchmarks/crash.py runs it for longer). After every
kill `amem doctor` finds the vault consistent or `amem doctor --fix` makes it so, and
every note an add or import acknowledged is on disk with its exact text."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from crashes import OPS, run_crashes  # noqa: E402

KILLS = 200  # in all, over two vaults at once; seeds fixed, kill moments drawn from them


def test_kills_lose_nothing_and_doctor_mends_the_rest(tmp_path):
    stats = run_crashes(tmp_path, kills=KILLS, lanes=2, seed=7)
    print(f"\nkills {dict(stats.kills)}, needed --fix {dict(stats.needed_fix)}, completed {dict(stats.completed)}, "
          f"acknowledged {stats.acknowledged}, problems found {dict(stats.problems)}")
    assert stats.failures == []
    assert stats.lost == []
    assert sum(stats.kills.values()) >= KILLS
    assert all(stats.kills[op] >= KILLS // len(OPS) for op in OPS), stats.kills
    assert stats.acknowledged >= 10
    # The kills hit writes: some left the index behind the files, and doctor --fix caught up.
    assert sum(stats.needed_fix.values()) > 0
