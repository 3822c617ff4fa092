"""`make test` runs the suite on every core, a file per worker at a time, the slow files
handed out first (so no core finishes alone with them)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _conftest():
    spec = importlib.util.spec_from_file_location("suite_conftest", ROOT / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _item(path: str, integration: bool = False):
    return SimpleNamespace(path=Path(path), get_closest_marker=lambda name: integration and name == "integration" or None)


def test_slow_files_are_handed_out_first_each_in_its_own_order():
    items = [_item("tests/cli/test_cli.py"), _item("tests/integration/test_llm_real.py", integration=True),
             _item("tests/unit/test_links.py"), _item("tests/reliability/test_concurrency.py"),
             _item("tests/cli/test_cli.py"), _item("tests/integration/test_llm_real.py")]
    slow_then_quick = [items[1], items[3], items[5], items[0], items[2], items[4]]
    _conftest().pytest_collection_modifyitems(None, items)
    assert items == slow_then_quick


def test_make_test_runs_the_suite_on_every_core_a_file_per_worker(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    plan = subprocess.run(["make", "-n", "-C", str(ROOT), "test", f"VENV={venv}"],
                          capture_output=True, text=True, check=True).stdout
    run = [line for line in plan.splitlines() if "-m pytest" in line]
    assert len(run) == 1 and "-n auto --dist loadfile" in run[0]
