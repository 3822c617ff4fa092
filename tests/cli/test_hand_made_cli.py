"""`amem list` and `amem search` give a hand-made note without a date its file's time."""

from __future__ import annotations

import json
import os


def test_list_and_search_show_the_files_time(run, vault):
    path = vault / "garden.md"
    path.write_text("Tomatoes need six hours of sun.\n", encoding="utf-8")
    os.utime(path, (1709649007, 1709649007))  # 2024-03-05T14:30:07Z
    assert run("init").exit_code == 0
    listed = run("--llm", "none", "list", "--json")
    assert json.loads(listed.stdout)[0]["created_at"] == "2024-03-05T14:30:07+00:00"
    found = run("--llm", "none", "search", "tomatoes", "--json")
    assert json.loads(found.stdout)[0]["created_at"] == "2024-03-05T14:30:07+00:00"
    plain = run("--llm", "none", "list")
    assert "2024-03-05" in plain.stdout
