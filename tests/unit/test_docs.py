"""The README says what the code does: its command table, settings table and MCP tools
table are checked against the Typer app, the Settings dataclass and the served tools, in
both directions, and config.py's list of the modules that read the environment against
the code."""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import json
import re
import threading
from pathlib import Path

import pytest
from conftest import facade_on

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    """The README's text under `heading`, up to the next heading."""
    start = README.index(f"\n{heading}\n")
    following = re.search(r"\n#{1,3} ", README[start + 1:])
    return README[start: start + 1 + following.start()] if following else README[start:]


def table_rows(text: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows."""
    rows = [line.strip().strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]  # the first is the header


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


# -- commands and options ------------------------------------------------------------


def code_commands() -> dict[str, list[str]]:
    """`amem ...` -> its long options, for each command a user runs (not hidden), and
    for each group that has options of its own (the root's global options)."""
    import typer.main

    from amem_cli.cli.app import app

    found: dict[str, list[str]] = {}

    def walk(cmd, path: str) -> None:
        options = [o for p in cmd.params if p.param_type_name == "option" and not p.hidden
                   for o in (*p.opts, *p.secondary_opts) if o.startswith("--") and o != "--help"]
        subs = {name: sub for name, sub in getattr(cmd, "commands", {}).items() if not sub.hidden}
        if options or not subs:
            found[path] = options
        for name, sub in subs.items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(app), "amem")
    return found


def readme_commands() -> dict[str, list[str]]:
    rows = table_rows(section("### Commands"))
    return {ticked(row[0])[0]: ticked(row[1]) for row in rows}


def test_every_command_is_in_the_readme_table_and_no_other():
    code, readme = code_commands(), readme_commands()
    assert sorted(set(code) - set(readme)) == [], "commands missing from the README's Commands table"
    assert sorted(set(readme) - set(code)) == [], "the README's Commands table names commands amem lacks"


def test_every_long_option_is_in_the_readme_table_and_no_other():
    code, readme = code_commands(), readme_commands()
    for name in code.keys() & readme.keys():
        assert sorted(readme[name]) == sorted(code[name]), f"`{name}`: the README's options differ from the code's"


# -- settings --------------------------------------------------------------------------


def readme_settings() -> list[tuple[list[str], list[str]]]:
    """(setting names, environment variables) of each row of the Settings table."""
    return [(ticked(row[0]), ticked(row[1])) for row in table_rows(section("### Settings"))]


def test_settings_table_and_settings_dataclass_agree():
    from amem_cli.config import Settings

    documented = [name for names, _ in readme_settings() for name in names]
    assert len(documented) == len(set(documented)), "a setting has two rows"
    assert sorted(documented) == sorted(f.name for f in dataclasses.fields(Settings))


def test_settings_table_names_each_settings_environment_variable():
    for names, env in readme_settings():
        assert env == [f"AMEM_{name.upper()}" for name in names]


def test_the_table_gives_each_numeric_settings_range():
    from amem_cli.config import RANGES

    for row in table_rows(section("### Settings")):
        names, ranges = ticked(row[0]), ticked(row[2])
        assert ranges == [f"{RANGES[n][0]:g}..{RANGES[n][1]:g}" for n in names if n in RANGES], names


def test_environment_variables_in_the_table_are_read():
    """The names the table gives are the ones load_settings reads (not only spelled alike)."""
    from amem_cli.config import _from_env

    for names, env in readme_settings():
        if names == ["dir"]:
            continue  # the vault folder: read apart, before the vault's own config
        assert sorted(_from_env({var: "1" for var in env})) == sorted(names)


# -- MCP tools -------------------------------------------------------------------------


def served_tools(vault: Path) -> dict[str, dict]:
    """Each tool the MCP server serves -> its input JSON schema."""
    from amem_cli.mcp_tools import build
    from amem_cli.server.worker import Turn

    facade = facade_on(vault)
    try:
        tools = asyncio.run(build(facade, Turn(), threading.Event()).list_tools())
    finally:
        facade.close()
    return {tool.name: tool.input_schema for tool in tools}


def readme_tools() -> dict[str, list[str]]:
    """tool -> its parameters as the README writes them: `x` (required), `x?` (optional,
    no default), `x=value` (optional, JSON value)."""
    out = {}
    for row in table_rows(section("### MCP: `amem mcp`")):
        name, params = re.fullmatch(r"`(\w+)\((.*)\)`", row[0]).groups()
        out[name] = [p.strip() for p in params.split(",") if p.strip()]
    return out


def test_mcp_tools_table_and_served_tools_agree(vault):
    served, documented = served_tools(vault), readme_tools()
    assert sorted(documented) == sorted(served), "the README's MCP tools differ from the served ones"
    for name, params in documented.items():
        schema = served[name]
        properties, required = schema.get("properties", {}), set(schema.get("required", []))
        assert [re.split(r"[?=]", p)[0] for p in params] == list(properties), f"{name}: parameters"
        for param in params:
            key = re.split(r"[?=]", param)[0]
            if "=" in param:
                assert key not in required and properties[key]["default"] == json.loads(param.split("=", 1)[1]), param
            elif param.endswith("?"):
                assert key not in required and properties[key].get("default") is None, param
            else:
                assert key in required, f"{name}: {key} is optional in the server"


# -- who reads the environment ---------------------------------------------------------


def reads_environment(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv"):
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                return True
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            if any(alias.name in ("environ", "getenv") for alias in node.names):
                return True
    return False


def test_config_names_every_module_that_reads_the_environment():
    from amem_cli import config

    package = ROOT / "amem_cli"
    readers = sorted(
        str(path.relative_to(ROOT)) for path in package.rglob("*.py")
        if reads_environment(ast.parse(path.read_text(encoding="utf-8"))) and path.name != "config.py"
    )
    named = sorted(set(re.findall(r"amem_cli/[\w/]+\.py", config.__doc__)))
    assert readers == named, "config.py's docstring and the modules that read the environment differ"


@pytest.mark.parametrize("key", ["search_limit", "link-treshold"])
def test_an_unknown_setting_in_a_config_file_is_one_error_with_a_hint(tmp_path, monkeypatch, key):
    from amem_cli.config import load_settings
    from amem_cli.errors import UsageError

    config = tmp_path / "config.toml"
    config.write_text(f"{key} = 1\n")
    monkeypatch.setenv("AMEM_CONFIG", str(config))
    with pytest.raises(UsageError, match="unknown setting") as info:
        load_settings(dir=str(tmp_path))
    assert "README" in info.value.hint
    if key == "link-treshold":
        assert "did you mean 'link_threshold'?" in info.value.hint
