"""All SQL lives in `amem_cli/index/`: no other module runs a statement, opens the
database or reaches into `SqliteIndex.db`. Services ask the index by name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import amem_cli

PACKAGE = Path(amem_cli.__file__).parent
INDEX = PACKAGE / "index"
RUNS_SQL = {"execute", "executescript", "executemany"}
DATABASES = {"sqlite3", "sqlite_utils"}
# Text that opens as an SQL statement (handed to a helper that runs it, say).
STATEMENT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|PRAGMA|CREATE|DROP|ALTER|WITH)\s")


def sql_outside_the_index(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of each way a module could run SQL itself."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            # `.query` is also the vector store's (vectors in): a query of text is SQL.
            if name in RUNS_SQL or (name == "query" and node.args and _text(node.args[0])):
                found.append((node.lineno, f".{name}(...)"))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and STATEMENT.match(node.value):
            found.append((node.lineno, "SQL text"))
        elif isinstance(node, ast.Attribute) and node.attr == "db":
            found.append((node.lineno, ".db"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names if a.name.split(".")[0] in DATABASES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in DATABASES:
            found.append((node.lineno, f"from {node.module} import"))
    return sorted(found)


def _text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def test_no_sql_outside_the_index():
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if INDEX in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        offences += [f"{path.relative_to(PACKAGE.parent)}:{line}: {what}" for line, what in sql_outside_the_index(tree)]
    assert offences == [], "SQL belongs in amem_cli/index/ behind a named method of one of its stores:\n" + "\n".join(offences)


def test_the_check_sees_each_way_in():
    """The check itself: each form of SQL a service could slip in is found, and the vector
    store's `query(vectors, k)` is not SQL."""
    source = """
import sqlite3
from sqlite_utils import Database
index.db.execute(statement)
rows = index.db["notes"].rows
conn.executemany(statement, ids)
cur.executescript(script)
db.query(f"{statement} LIMIT 1")
vectors.query(vectors_, 2 * k)
run(f"DELETE FROM {table}")
run('''
    SELECT id FROM notes''')
"""
    assert sql_outside_the_index(ast.parse(source)) == [
        (2, "import sqlite3"), (3, "from sqlite_utils import"), (4, ".db"), (4, ".execute(...)"), (5, ".db"),
        (6, ".executemany(...)"), (7, ".executescript(...)"), (8, ".query(...)"), (10, "SQL text"), (11, "SQL text"),
    ]
