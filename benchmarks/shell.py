"""amem from the shell, as a user or an agent meets it, on vaults of growing size.

    .venv/bin/python benchmarks/shell.py                          # 1,000 and 10,000 notes
    .venv/bin/python benchmarks/shell.py --sizes 100000           # about 2 h on 2 cores
    .venv/bin/python benchmarks/shell.py --sizes 1000 --embedder fake   # a quick check
    .venv/bin/python benchmarks/shell.py --sizes 1000 --ingest    # and the ingest row (minutes: the model)

For each size N it writes N varied notes (the seeded generator of foundation.py) to a
JSONL file and then runs the `amem` script in new processes, timing each whole command:

- `amem import FILE` into a new vault (`--llm none`; through the vault's warm server,
  which the command starts): notes/s;
- the size of `.amem/` per note;
- `amem --no-server reindex` (SQLite and every vector rebuilt from the files);
- `amem --no-server search` with no server running: a cold process, median of 3;
- `amem search` with the server warm: p50/p95 over --queries different queries;
- `amem add` with the server warm: p50/p95 over --adds notes (the reply comes once the
  file is written and the work queued; the server's worker does the rest);
- the server's resident memory after all that (`amem server status`), and the time
  `amem server status` takes (median of 5).

With `--ingest`, once more: a session of --messages chat messages piped into `amem
ingest` through the warm server with the bundled model (`--llm llama`): the seconds
until the command returns (the notes stored and searchable, the model's work queued),
and the seconds until the server's worker has done all of that work.

`amem --help` is timed once (median of 5). The servers started are stopped at the end.
Figures only; nothing is asserted.

With `--against DIR` it compares this checkout with another one instead (DIR: a git
worktree of amem, e.g. `git worktree add --detach ../amem-base bae2764`; it runs on this
venv, its `amem_cli` first on PYTHONPATH): one paired run of `amem --help`, of warm
`amem search` and of warm `amem add` (--adds new notes of the same generator, the same
for both), each vault built and served by its own checkout, the two checkouts taking
turns command by command (ABBA), so a machine that slows down slows both alike:

    .venv/bin/python benchmarks/shell.py --against ../amem-base --sizes 1000 --queries 100
    .venv/bin/python benchmarks/shell.py --against ../amem-base --sizes 10000 --queries 100 --adds 100
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from foundation import make_notes, make_queries, percentile  # noqa: E402

AMEM = [str(Path(sys.executable).parent / "amem")]


def run(vault: Path, *args: str, env: dict, stdin: str | None = None) -> tuple[float, subprocess.CompletedProcess]:
    argv = [*AMEM, "--dir", str(vault), *args]
    t0 = time.perf_counter()
    res = subprocess.run(argv, capture_output=True, text=True, env=env, input=stdin)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return seconds, res


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(n: int, base: Path, env: dict, queries: int, adds: int) -> dict:
    vault = base / f"vault-{n}"
    vault.mkdir()
    notes = make_notes(n)
    jsonl = base / f"notes-{n}.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for note in notes:
            fh.write(json.dumps({**note, "created_at": note["created_at"].isoformat()}) + "\n")
    out: dict = {"notes": n}
    run(vault, "init", env=env)

    seconds, res = run(vault, "import", str(jsonl), "--json", env=env)
    out["import_s"] = seconds
    out["import_rate"] = json.loads(res.stdout)["imported"] / seconds
    run(vault, "server", "stop", env=env)
    out["index_bytes_per_note"] = size_of(vault / ".amem") / n

    out["reindex_s"], _ = run(vault, "--no-server", "reindex", env=env)
    asked = [q for q, _ in make_queries(notes, queries + 3)]
    out["cold_search"] = [run(vault, "--no-server", "search", q, "--limit", "5", env=env)[0] for q in asked[:3]]

    run(vault, "search", "warm up", env=env)  # starts the server
    out["warm_search"] = [run(vault, "search", q, "--limit", "5", env=env)[0] for q in asked[3:]]
    out["warm_add"] = [run(vault, "add", f"A new note number {i} about measuring the shell", env=env)[0]
                       for i in range(adds)]
    time.sleep(2)  # let the worker finish the adds: memory after the work
    _, res = run(vault, "server", "status", "--json", env=env)
    out["server_rss_mb"] = json.loads(res.stdout).get("rss_mb")
    out["server_status"] = [run(vault, "server", "status", env=env)[0] for _ in range(5)]
    run(vault, "server", "stop", env=env)
    return out


def session(messages: int) -> str:
    """A chat of `messages` turns, as an agent's end-of-session hook pipes it in."""
    topics = ["the Postgres migration", "the deploy pipeline", "the tea budget", "glacier speed", "the walrus census"]
    return "\n\n".join(f"{'user' if i % 2 == 0 else 'assistant'}: message {i} is about {topics[i % len(topics)]}, "
                        f"and what we decided about it on day {i}." for i in range(messages)) + "\n"


def measure_ingest(base: Path, env: dict, messages: int) -> dict:
    """`amem ingest` of a session through the warm server with the bundled model."""
    vault = base / "vault-ingest"
    vault.mkdir()
    env = {**env, "AMEM_LLM": "llama"}
    run(vault, "init", env=env)
    run(vault, "search", "warm up", env=env)  # starts the server, which loads the model
    returned, res = run(vault, "ingest", "--json", env=env, stdin=session(messages))
    t0 = time.perf_counter() - returned
    queued = json.loads(res.stdout)["queued"]
    while json.loads(run(vault, "server", "status", "--json", env=env)[1].stdout)["queued"]:
        time.sleep(0.5)
    done = time.perf_counter() - t0
    run(vault, "server", "stop", env=env)
    return {"messages": messages, "notes": queued, "returned_s": returned, "done_s": done}


def paired(base: Path, env: dict, other: Path, n: int, queries: int, rounds: int, adds: int) -> None:
    """`amem --help`, warm `amem search` and warm `amem add` of this checkout and `other`, taking turns."""
    sides = {"this": env, "other": {**env, "PYTHONPATH": str(other.resolve())}}
    os.chdir(base)  # not a checkout: `python -m amem_cli` (how a server starts) would import the one it is run in
    check = [sys.executable, "-c", "import amem_cli, sys; sys.stdout.write(amem_cli.__file__)"]
    for name, side_env in sides.items():
        print(f"{name}: {subprocess.run(check, env=side_env, capture_output=True, text=True, check=True).stdout}")
    notes, added = (lambda made: (made[:n], made[n:]))(make_notes(n + adds))  # the adds: later notes of the same kind
    jsonl = base / f"notes-{n}.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for note in notes:
            fh.write(json.dumps({**note, "created_at": note["created_at"].isoformat()}) + "\n")
    vaults = {name: base / f"vault-{name}" for name in sides}
    for name, vault in vaults.items():
        vault.mkdir()
        run(vault, "init", env=sides[name])
        run(vault, "import", str(jsonl), env=sides[name])
        run(vault, "search", "warm up", env=sides[name])  # its server, warm
    asked = [q for q, _ in make_queries(notes, queries)]
    times: dict[str, dict[str, list[float]]] = {what: {s: [] for s in sides} for what in ("help", "search", "add")}
    try:
        for i in range(max(rounds, queries, adds)):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))  # ABBA: neither goes first every time
            for name in order:
                if i < rounds:
                    t0 = time.perf_counter()
                    subprocess.run([*AMEM, "--help"], capture_output=True, env=sides[name], check=True)
                    times["help"][name].append(time.perf_counter() - t0)
                if i < queries:
                    times["search"][name].append(run(vaults[name], "search", asked[i], "--limit", "5", env=sides[name])[0])
                if i < adds:
                    note = added[i]
                    times["add"][name].append(run(vaults[name], "add", note["content"], "--created",
                                                  note["created_at"].isoformat(), env=sides[name])[0])
    finally:
        for name, vault in vaults.items():
            run(vault, "server", "stop", env=sides[name])
    print("command | this p50 ms | other p50 ms | this p95 ms | other p95 ms | median of paired differences ms (this - other)")
    print("--- | --- | --- | --- | --- | ---")
    for what, label in (("help", "`amem --help`"), ("search", f"warm `amem search` ({n:,} notes)"),
                        ("add", f"warm `amem add` ({n:,} notes)")):
        mine, theirs = times[what]["this"], times[what]["other"]
        if not mine:
            continue
        diff = statistics.median(a - b for a, b in zip(mine, theirs)) * 1000
        print(f"{label} | {percentile(mine, 0.5) * 1000:.1f} | {percentile(theirs, 0.5) * 1000:.1f} | "
              f"{percentile(mine, 0.95) * 1000:.1f} | {percentile(theirs, 0.95) * 1000:.1f} | {diff:+.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated vault sizes (default 1000,10000)")
    ap.add_argument("--embedder", default=None, help="the embedder (default: amem's default)")
    ap.add_argument("--queries", type=int, default=30, help="warm searches per size (default 30)")
    ap.add_argument("--adds", type=int, default=20, help="warm adds per size (default 20)")
    ap.add_argument("--dir", help="work here (kept) instead of a temp folder (removed)")
    ap.add_argument("--ingest", action="store_true",
                    help="also time `amem ingest` of a session with the bundled model (minutes of model work)")
    ap.add_argument("--messages", type=int, default=40, help="messages in the ingested session (default 40)")
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="compare with the amem checkout in DIR: one paired run of --help and warm search (see above)")
    ap.add_argument("--rounds", type=int, default=30, help="`amem --help` runs per checkout with --against (default 30)")
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEM_")}
    env.update({"AMEM_LLM": "none", "AMEM_SERVER": "auto", "HF_HUB_OFFLINE": "1", "AMEM_CONFIG": "/nonexistent/config.toml"})
    if args.embedder:
        env["AMEM_EMBEDDER"] = args.embedder
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="amem-shell-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable), Python {platform.python_version()}, "
          f"{platform.platform()}")
    print(f"command: {shlex.join([sys.executable, *sys.argv])}")
    print(f"embedder: {env.get('AMEM_EMBEDDER', 'default')}, llm: none")
    if args.against:
        try:
            paired(base, env, args.against, int(args.sizes.split(",")[0]), args.queries, args.rounds, args.adds)
        finally:
            if not args.dir:
                shutil.rmtree(base, ignore_errors=True)
        return
    helps = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([*AMEM, "--help"], capture_output=True, env=env, check=True)
        helps.append(time.perf_counter() - t0)
    print(f"`amem --help`: median {statistics.median(helps) * 1000:.0f} ms of 5")
    ms = lambda xs, q: f"{percentile(xs, q) * 1000:.0f}"  # noqa: E731
    header = ("notes", "import notes/s", "import s", ".amem B/note", "reindex s", "cold search ms (median)",
              "warm search p50/p95 ms", "add p50/p95 ms", "server RSS MB", "server status ms (median)")
    print(" | ".join(header))
    print(" | ".join("---" for _ in header), flush=True)
    try:
        for n in args.sizes.split(","):  # a row as each size is done: the 100k one takes an hour or more
            r = measure(int(n), base, env, args.queries, args.adds)
            print(" | ".join([
                f"{r['notes']:,}", f"{r['import_rate']:.0f}", f"{r['import_s']:.1f}", f"{r['index_bytes_per_note']:.0f}",
                f"{r['reindex_s']:.1f}", f"{statistics.median(r['cold_search']) * 1000:.0f}",
                f"{ms(r['warm_search'], 0.5)} / {ms(r['warm_search'], 0.95)}",
                f"{ms(r['warm_add'], 0.5)} / {ms(r['warm_add'], 0.95)}", f"{r['server_rss_mb']}",
                f"{statistics.median(r['server_status']) * 1000:.0f}",
            ]), flush=True)
        if args.ingest:
            r = measure_ingest(base, env, args.messages)
            print(f"\n`amem ingest` of a {r['messages']}-message session (bundled model, warm server): returned in "
                  f"{r['returned_s']:.2f} s with {r['notes']} notes' model work queued; all of it done after "
                  f"{r['done_s']:.0f} s", flush=True)
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
