"""The everyday commands read without Typer.

Importing Typer and building its app takes ~60 ms, more than a warm server takes to
answer a search. So `search`, `context`, `add`, `show`, `list` (and `server status`) are read here, from a
table of their options, and run (`actions`) in the same session and behind the same
error boundary as through Typer. Anything this reader does not know for sure (`--help`,
an option it does not know, a value it cannot take, a missing argument) goes to Typer,
which says what is wrong as it always has. `tests/cli/test_quick.py` holds the table to
the Typer declarations in `commands/`, and the two readers to the same call.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..global_options import GLOBAL_OPTIONS

TEXT, INT, FLAG, TEXTS = "text", "int", "flag", "texts"  # TEXTS: repeatable, a list (None when not given)


class Option(NamedTuple):
    param: str
    names: tuple[str, ...]
    kind: str = TEXT
    default: Any = None
    min: int | None = None


class Command(NamedTuple):
    action: str  # the function's name in `actions`
    arguments: tuple[tuple[str, bool], ...]  # (parameter, required), in order
    options: tuple[Option, ...]


def _limit(default: int) -> Option:
    return Option("limit", ("--limit", "-n"), INT, default, min=1)


TAG = Option("tag", ("--tag", "-t"), TEXTS)
BOX = Option("box", ("--box", "-b"), TEXTS)
SINCE = Option("since", ("--since",))
UNTIL = Option("until", ("--until",))
NOW = Option("now", ("--now",))
JSON = Option("json_output", ("--json",), FLAG, False)
AS_OF = Option("as_of", ("--as-of",))
INCLUDE_EXPIRED = Option("include_expired", ("--include-expired",), FLAG, False)

GLOBAL = tuple(Option(o.name, o.flags) if o.setting else Option(o.name, o.flags, FLAG, False) for o in GLOBAL_OPTIONS)

COMMANDS = {
    "search": Command("search", (("query", True),), (
        _limit(10), Option("mode", ("--mode",), TEXT, "hybrid"), TAG, BOX, SINCE, UNTIL, NOW, AS_OF, INCLUDE_EXPIRED,
        Option("explain", ("--explain",), FLAG, False), JSON)),
    "context": Command("context", (("query", True),), (
        Option("max_tokens", ("--max-tokens",), INT, 2000, min=1), _limit(10), TAG, BOX, SINCE, UNTIL, NOW, AS_OF,
        INCLUDE_EXPIRED, Option("history", ("--history",), FLAG, False), JSON)),
    "add": Command("add", (("text", False),), (
        Option("keyword", ("--keyword", "-k"), TEXTS), TAG, Option("context", ("--context",)), BOX,
        Option("meta", ("--meta", "-m"), TEXTS), Option("created", ("--created",)), Option("after", ("--after",)),
        Option("wait", ("--wait",), FLAG, False), Option("no_wait", ("--no-wait", "--defer"), FLAG, False),
        Option("no_redact", ("--no-redact",), FLAG, False), Option("ttl", ("--ttl",)), JSON)),
    "show": Command("show", (("note_id", True),), (JSON,)),
    "list": Command("list_", (), (TAG, BOX, SINCE, UNTIL, _limit(50), JSON)),
    "server status": Command("server_status", (), (JSON,)),  # asked often, and wanted at once
}


class Unsure(Exception):
    """Typer should read this command line."""


def dashed_text(token: str) -> bool:
    """A word that starts with a dash but is no option: a line of three dashes or more (a
    Markdown rule, a PEM or PGP key block) or a dash and a space (a list item). It is the
    text of `add`, the query of `search`: Click would take it for an unknown option."""
    return token.startswith("---") or token.startswith("-") and any(c.isspace() for c in token)


def texts_last(argv: list[str]) -> list[str]:
    """The command line with the dashed text (`dashed_text`) of an everyday command moved
    after a `--`, where Click reads it as the argument it is (an option's value stays)."""
    try:
        _, rest = _read(argv, GLOBAL, (), interspersed=False)
    except Unsure:
        return argv
    name = rest[0] if rest else None
    if name not in COMMANDS or "--" in rest:
        return argv
    takes_value = {n for o in COMMANDS[name].options if o.kind != FLAG for n in o.names}
    head, tokens, texts = argv[: len(argv) - len(rest) + 1], rest[1:], []
    kept: list[str] = []
    while tokens:
        token = tokens.pop(0)
        if token in takes_value and tokens:
            kept += [token, tokens.pop(0)]
        elif dashed_text(token):
            texts.append(token)
        else:
            kept.append(token)
    return [*head, *kept, "--", *texts] if texts else argv


def parse(argv: list[str]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """`amem [GLOBAL OPTIONS] COMMAND [ARGS]` -> (global options, command, its parameters),
    each parameter given or its default, as Typer would pass them. Unsure otherwise."""
    flags, rest = _read(argv, GLOBAL, (), interspersed=False)
    words = 2 if rest[:1] == ["server"] else 1  # a command of a group: `server status`
    name = " ".join(rest[:words])
    if len(rest) < words or name not in COMMANDS:
        raise Unsure
    command = COMMANDS[name]
    params, arguments = _read(rest[words:], command.options, command.arguments, interspersed=True)
    if arguments:
        raise Unsure  # more arguments than the command takes
    return flags, command.action, params


def _read(argv: list[str], options: tuple[Option, ...], arguments: tuple[tuple[str, bool], ...],
          interspersed: bool) -> tuple[dict[str, Any], list[str]]:
    """Options (click's rules: `--name value`, `--name=value`, `-n value`, `-nvalue`; the
    last of a repeated option wins, a repeatable one collects) and then the arguments in
    order. Returns the parameters and the tokens left over."""
    by_name = {name: o for o in options for name in o.names}
    values: dict[str, Any] = {o.param: o.default for o in options}
    loose: list[str] = []
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        if token == "--":
            loose += tokens
            break
        if not token.startswith("-") or token == "-" or dashed_text(token):
            loose.append(token)
            if not interspersed:
                loose += tokens
                break
            continue
        name, given = _split(token, by_name)
        option = by_name[name]
        if option.kind == FLAG:
            if given is not None:
                raise Unsure
            values[option.param] = True
            continue
        if given is None:
            if not tokens:
                raise Unsure
            given = tokens.pop(0)
        value = _convert(option, given)
        if option.kind == TEXTS:
            values[option.param] = [*(values[option.param] or []), value]
        else:
            values[option.param] = value
    for param, required in arguments:
        if loose:
            values[param] = loose.pop(0)
        elif required:
            raise Unsure
        else:
            values[param] = None
    return values, loose


def _split(token: str, by_name: dict[str, Option]) -> tuple[str, str | None]:
    """An option token -> (its name, the value written into it, if any)."""
    if token.startswith("--"):
        name, eq, value = token.partition("=")
        if name in by_name:
            return name, value if eq else None
    elif token[:2] in by_name:
        return token[:2], token[2:] or None
    raise Unsure  # --help, --version, an option it does not take, a negative number...


def _convert(option: Option, value: str) -> Any:
    if option.kind != INT:
        return value
    try:
        number = int(value)
    except ValueError:
        raise Unsure from None
    if option.min is not None and number < option.min:
        raise Unsure
    return number


def main(argv: list[str]) -> int | None:
    """Run an everyday command without Typer: its exit status, or None to leave it to Typer."""
    try:
        flags, action_name, params = parse(argv)
    except Unsure:
        return None
    from . import actions
    from .session import Session, run_guarded

    session = Session(flags)
    try:
        return run_guarded(getattr(actions, action_name), session, params)
    finally:
        session.close()
