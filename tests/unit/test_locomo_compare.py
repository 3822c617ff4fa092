"""benchmarks/locomo.py --against: the paired comparison of two runs' hybrid figures."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))

from locomo import compare  # noqa: E402


def _question(n: int, recall: float, mrr: float) -> dict:
    return {"sample_id": "conv-x", "question": f"q{n}", "category": "single-hop",
            "amem hybrid": {"recall@5": recall, "recall@10": recall, "hit@10": float(recall > 0), "MRR": mrr}}


def _dump(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_same_run_changes_nothing(tmp_path, capsys):
    rows = [_question(n, n % 2, 0.5) for n in range(20)]
    compare(rows, _dump(tmp_path / "before.jsonl", rows), rounds=200)
    out = capsys.readouterr().out
    assert "20 questions in both" in out
    assert "recall@10  +0.000  [+0.000, +0.000]  0 up, 0 down" in out


def test_a_change_is_paired_by_question_and_counted(tmp_path, capsys):
    before = [_question(n, 0.0, 0.0) for n in range(10)] + [_question(99, 1.0, 1.0)]  # q99 is not asked now
    now = [_question(n, 1.0 if n < 4 else 0.0, 0.0) for n in range(10)]
    compare(now, _dump(tmp_path / "before.jsonl", before), rounds=500)
    out = capsys.readouterr().out
    assert "10 questions in both" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("recall@10"))
    mean, low, high = (float(x.strip("[],")) for x in line.split()[1:4])
    assert mean == 0.4 and 0.0 <= low < 0.4 < high <= 1.0
    assert line.endswith("4 up, 0 down")


def test_a_question_asked_twice_is_paired_with_its_twin(tmp_path, capsys):
    before = [_question(1, 0.0, 0.0), _question(1, 1.0, 1.0)]
    compare([_question(1, 0.0, 0.0), _question(1, 1.0, 1.0)], _dump(tmp_path / "before.jsonl", before), rounds=100)
    out = capsys.readouterr().out
    assert "2 questions in both" in out and "recall@10  +0.000  [+0.000, +0.000]  0 up, 0 down" in out
