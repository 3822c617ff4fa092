"""Names in the index (note ids, tags, boxes) for shell completion.

Plain sqlite3, read-only: a TAB neither imports sqlite-utils (and numpy with it) nor
migrates, locks or writes anything, and a vault without an index offers nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

# What can be completed: the table and column holding it.
_COLUMNS = {"id": ("notes", "id"), "tag": ("note_tags", "tag"), "box": ("note_boxes", "box")}


def names(index_db: Path, kind: str, prefix: str = "") -> list[str]:
    """The distinct ids, tags or boxes that start with `prefix`, sorted."""
    table, column = _COLUMNS[kind]
    if not index_db.is_file():
        return []
    conn = sqlite3.connect(f"{index_db.as_uri()}?mode=ro", uri=True, timeout=1)
    try:
        sql = f"SELECT DISTINCT {column} FROM {table} WHERE substr({column}, 1, ?) = ? ORDER BY 1"
        return [r[0] for r in conn.execute(sql, [len(prefix), prefix])]
    finally:
        conn.close()
