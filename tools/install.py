"""What `make install` is doing, said while it does it (standard library only).

    python tools/install.py check        # before pip: will llama.cpp be compiled, and can it be?
    python tools/install.py pip ARGS...  # `pip install ARGS`: a line per stage, never minutes of silence

pip's whole output goes to build/pip-install.log; its last lines are shown if it fails.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

LOG = Path("build/pip-install.log")
# Measured on a quiet 2-core machine (issue 40): the llama.cpp build is most of `make demo`.
BUILD_MINUTES = "about 5 minutes on 2 idle cores (three times that on a busy machine)"
COMPILER_HINT = (
    "Debian/Ubuntu: sudo apt-get install build-essential cmake; "
    "Fedora: sudo dnf install gcc-c++ cmake; macOS: xcode-select --install"
)
HEARTBEAT = 15.0  # seconds of pip silence before a line says it is still at work


def _cached_llama_wheel() -> bool:
    """Has pip built llama-cpp-python here before? (Its wheel cache keeps locally built wheels.)"""
    found = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "list", "llama_cpp_python", "--format", "abspath"],
        capture_output=True, text=True,
    )
    return found.returncode == 0 and bool(found.stdout.strip())


def compiler() -> str | None:
    """The C++ compiler a CMake build would find: $CXX, else the usual names on PATH."""
    named = os.environ.get("CXX", "").split()
    if named and shutil.which(named[0]):
        return named[0]
    return next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)


def check(installed: bool, cached: bool, cxx: str | None, cmake: str | None) -> tuple[int, list[str]]:
    """(exit status, lines to print) for the state of this machine."""
    if installed:
        return 0, []
    if cached:
        return 0, ["llama-cpp-python: pip's wheel from an earlier build, nothing to compile."]
    if cxx is None:
        return 1, [
            "error: llama-cpp-python compiles llama.cpp (C++) and no C++ compiler was found.",
            f"hint: install one, then run make again ({COMPILER_HINT}).",
        ]
    lines = [
        f"Compiling llama.cpp (llama-cpp-python, with {cxx}): {BUILD_MINUTES}.",
        "It happens once: pip caches the wheel, and later installs take seconds.",
    ]
    if cmake is None:
        lines.append("cmake is not installed: pip fetches it from PyPI for the build "
                     "(or: sudo apt-get install cmake).")
    return 0, lines


# -- pip's output, a line per stage -------------------------------------------------------

# pip's own lines start at column 0; a build's (a build environment's pip, CMake) are indented.
_COLLECTING = re.compile(r"^Collecting (\S+)")
_DOWNLOADING = re.compile(r"^\s*Downloading (\S+) \((\d+(?:\.\d+)?) MB\)")
_BUILDING = re.compile(r"^\s*Building (?:wheel|editable) for (\S+)")
_STEP = re.compile(r"^\s*\[(\d+)/(\d+)\] ")  # ninja (or make) inside a CMake build
_INSTALLING = re.compile(r"^Installing collected packages: (.*)")
_DONE = re.compile(r"^Successfully installed (.*)")
_ERROR = re.compile(r"^\s*(ERROR|error):")
BIG_DOWNLOAD_MB = 10.0


class Stages:
    """Turns pip's verbose lines into the few that say where it is."""

    def __init__(self, every: float = 10.0):
        self.every = every  # seconds between two lines of compile progress
        self.collected = 0
        self.building: str | None = None
        self.last_step = -every

    def feed(self, line: str, now: float) -> list[str]:
        if _COLLECTING.match(line):
            self.collected += 1
            return ["  resolving: looking for the packages needed"] if self.collected == 1 else []
        if (m := _DOWNLOADING.match(line)) and float(m.group(2)) >= BIG_DOWNLOAD_MB:
            return [f"  downloading {m.group(1).rsplit('/', 1)[-1]} ({m.group(2)} MB)"]
        if (m := _BUILDING.match(line)) and m.group(1) != self.building:
            self.building = m.group(1)
            return [f"  building {self.building}"]
        if self.building and (m := _STEP.match(line)):
            done, total = int(m.group(1)), int(m.group(2))
            if now - self.last_step >= self.every or done == total:
                self.last_step = now
                return [f"  compiling {self.building}: step {done} of {total}"]
            return []
        if m := _INSTALLING.match(line):
            return [f"  installing {len(m.group(1).split(','))} packages"]
        if m := _DONE.match(line):
            return [f"  installed {len(m.group(1).split())} packages"]
        if _ERROR.match(line):
            return [line.rstrip()]
        return []


def _lines(stream, out: queue.Queue) -> None:
    for line in stream:
        out.put(line)
    out.put(None)


def run_pip(args: list[str]) -> int:
    print(f"pip install {' '.join(args)}", flush=True)
    return run([sys.executable, "-m", "pip", "install", "-v", *args])


def run(command: list[str], log: Path = LOG, heartbeat: float = HEARTBEAT) -> int:
    """Run pip's COMMAND, keep all it says in LOG, show its stages; its exit status."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True).start()
    stages = Stages()
    said = time.monotonic()
    with log.open("a", encoding="utf-8") as kept:
        while True:
            try:
                line = lines.get(timeout=heartbeat)
            except queue.Empty:
                line = ""
            now = time.monotonic()
            if line is None:
                break
            kept.write(line)
            for shown in stages.feed(line, now):
                print(shown, flush=True)
                said = now
            if now - said >= heartbeat:
                minutes, seconds = divmod(int(now - started), 60)
                print(f"  ... still working ({minutes}:{seconds:02d})", flush=True)
                said = now
    status = proc.wait()
    if status:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-30:]
        print("\n".join(tail), file=sys.stderr)
        print(f"error: pip failed (exit {status}); its whole output: {log}", file=sys.stderr)
    return status


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        status, lines = check(
            installed=importlib.util.find_spec("llama_cpp") is not None,
            cached=_cached_llama_wheel(),
            cxx=compiler(),
            cmake=shutil.which("cmake"),
        )
        for line in lines:
            print(line, file=sys.stderr if status else sys.stdout)
        return status
    if argv[:1] == ["pip"]:
        return run_pip(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
