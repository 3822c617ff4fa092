"""`make install` says what it does: the llama.cpp build announced (how long, once), a
missing compiler named before pip starts, signs of life during pip, no packaging banners."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("install_tool", ROOT / "tools" / "install.py")
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)


def test_a_build_to_come_is_announced_with_its_time_and_that_it_happens_once():
    status, lines = install.check(installed=False, cached=False, cxx="g++", cmake="/usr/bin/cmake")
    said = " ".join(lines)
    assert status == 0
    assert "Compiling llama.cpp" in said and "g++" in said
    assert "minutes" in said and "once" in said and "caches the wheel" in said


def test_a_missing_compiler_stops_the_install_and_names_the_command_that_installs_one():
    status, lines = install.check(installed=False, cached=False, cxx=None, cmake=None)
    assert status == 1
    assert "no C++ compiler" in lines[0]
    assert "apt-get install build-essential cmake" in lines[1]


def test_a_missing_cmake_is_named_but_not_fatal_since_pip_fetches_it():
    status, lines = install.check(installed=False, cached=False, cxx="c++", cmake=None)
    assert status == 0 and any("cmake is not installed" in line for line in lines)


def test_nothing_to_compile_needs_no_compiler():
    assert install.check(installed=True, cached=False, cxx=None, cmake=None) == (0, [])
    status, lines = install.check(installed=False, cached=True, cxx=None, cmake=None)
    assert status == 0 and "nothing to compile" in lines[0]


def test_compiler_found_through_cxx(monkeypatch):
    monkeypatch.setenv("CXX", f"{sys.executable} -O2")
    assert install.compiler() == sys.executable


# pip -v's lines as pip 26 and scikit-build-core print them (abridged; a build
# environment's own pip is indented and is not the install's progress)
PIP_VERBOSE = """\
Collecting torch==2.13.0
  Downloading torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl (184.6 MB)
Collecting filelock (from torch==2.13.0)
  Downloading filelock-3.20.0-py3-none-any.whl (16 kB)
Requirement already satisfied: numpy in ./.venv/lib/python3.11/site-packages
  Installing build dependencies: started
  Collecting scikit-build-core>=0.9.2
  Installing collected packages: scikit-build-core
  Successfully installed scikit-build-core-0.11.6
Building wheels for collected packages: llama-cpp-python
  Building wheel for llama-cpp-python (pyproject.toml): started
  Running command Building wheel for llama-cpp-python (pyproject.toml)
  *** Configuring CMake...
  [1/120] Building C object vendor/llama.cpp/ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o
  [2/120] Building C object vendor/llama.cpp/ggml/src/CMakeFiles/ggml-base.dir/ggml-alloc.c.o
  [60/120] Building CXX object vendor/llama.cpp/src/CMakeFiles/llama.dir/llama.cpp.o
  [120/120] Linking CXX shared library vendor/llama.cpp/src/libllama.so
  Building wheel for llama-cpp-python (pyproject.toml): finished with status 'done'
Installing collected packages: filelock, torch
Successfully installed filelock-3.20.0 torch-2.13.0
"""


def test_pips_lines_become_one_line_a_stage_and_compile_steps_at_most_every_few_seconds():
    stages = install.Stages(every=10.0)
    shown = []
    for second, line in enumerate(PIP_VERBOSE.splitlines()):
        shown += stages.feed(line, now=float(second))
    assert shown == [
        "  resolving: looking for the packages needed",
        "  downloading torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl (184.6 MB)",
        "  building llama-cpp-python",
        "  compiling llama-cpp-python: step 1 of 120",
        "  compiling llama-cpp-python: step 120 of 120",  # the last step is always shown
        "  installing 2 packages",
        "  installed 2 packages",
    ]


def test_a_silent_pip_still_shows_signs_of_life_and_its_output_is_kept(tmp_path, capsys):
    log = tmp_path / "pip.log"
    quiet = "import time; print('Collecting x', flush=True); time.sleep(0.8); print('Successfully installed x-1')"
    assert install.run([sys.executable, "-c", quiet], log=log, heartbeat=0.2) == 0
    out = capsys.readouterr().out
    assert "still working" in out
    # a slow interpreter start may add beats before the first line: the one that counts comes during the sleep
    assert out.index("resolving") < out.rindex("still working") < out.index("installed 1 packages")
    assert "Collecting x" in log.read_text()


def test_a_failing_pip_shows_its_last_lines_and_where_the_rest_is(tmp_path, capsys):
    log = tmp_path / "pip.log"
    failing = "import sys; print('gcc: fatal error: no input'); sys.exit(3)"
    assert install.run([sys.executable, "-c", failing], log=log, heartbeat=5) == 3
    err = capsys.readouterr().err
    assert "gcc: fatal error: no input" in err and str(log) in err


def test_make_install_checks_first_and_every_pip_install_shows_progress(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()  # exists: make need not create it
    plan = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "install-test", f"VENV={venv}"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    steps = [line for line in plan if "install" in line]
    assert "tools/install.py check" in steps[0]
    assert len(steps) == 4 and all("tools/install.py pip" in line for line in steps[1:])


def test_the_editable_install_raises_no_warning_banner(tmp_path):
    """The build an editable install runs (`pip install -e .`), on a copy of the project's
    packaging: setuptools warns in a "!!" banner when it must guess the package layout."""
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("the project builds with setuptools 77 or later (pyproject.toml)")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(ROOT / "amem_cli", project / "amem_cli",
                    ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta as b; print(b.build_editable('dist'))"],
        cwd=project, capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    assert list((project / "dist").glob("amem_cli-*.whl"))
    assert "!!" not in build.stderr and "Editable installation" not in build.stderr


def test_the_readme_set_up_says_what_the_install_does():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    set_up = readme[readme.index("## Set up"):readme.index("## A short tour")]
    assert "compiles llama.cpp" in set_up and "5 minutes on 2 idle cores" in install.BUILD_MINUTES
    assert "sudo apt-get install build-essential cmake" in set_up and "build-essential cmake" in install.COMPILER_HINT
    assert str(install.LOG) in set_up
