"""Shell completion: the scripts in completions/ and the values a TAB offers.

The scripts are Typer's: each runs `amem` with _AMEM_COMPLETE set and offers what it
answers, so commands and options come from the app itself and cannot go stale. Note
ids, tags and boxes come straight from the vault's index file (no container, no model).

`python -m amem_cli.cli.completions [FOLDER]` (or `make completions`) writes the scripts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import typer

PROG = "amem"
COMPLETE_VAR = "_AMEM_COMPLETE"
SCRIPTS = {"bash": "amem.bash", "zsh": "_amem", "fish": "amem.fish"}


def script(shell: str) -> str:
    from typer.completion import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell) + "\n"


def write_scripts(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for shell, name in SCRIPTS.items():
        path = folder / name
        path.write_text(script(shell), encoding="utf-8")
        paths.append(path)
    return paths


def prepare() -> None:
    """Before the app answers a completion request: Typer registers its shell classes
    (which the scripts above talk to) only for apps made with add_completion=True."""
    from typer.completion import completion_init

    completion_init()


def _names(kind: str, ctx: typer.Context, incomplete: str) -> list[str]:
    # A TAB that cannot read the index offers nothing rather than a traceback.
    try:
        from ..index.names import names
        from ..places import index_db
        from ..server.client import settings_for

        settings = settings_for(ctx.find_root().params)  # the vault as the command would find it
        index = index_db(Path(settings.dir).expanduser().resolve(), settings.cache_dir)
        found = names(index, kind, incomplete) if index is not None else []
        return [name for name in found if name.isprintable()]  # the shell shows them raw: no terminal escapes
    except Exception:
        return []


def choices(values: Callable[[], Iterable[str]]) -> Callable[[str], list[str]]:
    """A TAB for an option of fixed values: those starting with what is typed. `values`
    is called only then (it may import the module that holds them)."""

    def complete(incomplete: str) -> list[str]:
        return [v for v in values() if v.startswith(incomplete)]

    return complete


def _modes() -> tuple[str, ...]:
    from ..retrieve import MODES

    return MODES


def _formats() -> list[str]:
    from ..services.graph import FORMATS

    return list(FORMATS)


def _profiles() -> list[str]:
    from ..config import PROFILES

    return list(PROFILES)


def _embedders() -> tuple[str, ...]:
    from ..config import EMBEDDERS

    return EMBEDDERS


def _llms() -> list[str]:
    from ..llm import KINDS

    return [k for k in KINDS if k != "fake"]  # the scripted model of the tests: not for a person


complete_modes = choices(_modes)
complete_formats = choices(_formats)
complete_profiles = choices(_profiles)
complete_embedders = choices(_embedders)
complete_llms = choices(_llms)
complete_config_actions = choices(lambda: ["show"])


def complete_ids(ctx: typer.Context, incomplete: str) -> list[str]:
    return _names("id", ctx, incomplete)


def complete_tags(ctx: typer.Context, incomplete: str) -> list[str]:
    return _names("tag", ctx, incomplete)


def complete_boxes(ctx: typer.Context, incomplete: str) -> list[str]:
    return _names("box", ctx, incomplete)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    for path in write_scripts(Path(args[0] if args else "completions")):
        print(path)


if __name__ == "__main__":
    main()
