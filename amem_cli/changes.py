"""Compare the files on disk with what the index knows. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .vault import FileStat


@dataclass
class ChangeSet:
    added: list[str] = field(default_factory=list)  # on disk, never indexed
    modified: list[str] = field(default_factory=list)  # stat differs: hash to confirm
    removed: list[str] = field(default_factory=list)  # indexed, gone from disk

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.removed)

    def __len__(self) -> int:
        return len(self.added) + len(self.modified) + len(self.removed)


def plan_changes(disk: Mapping[str, FileStat], indexed: Mapping[str, FileStat]) -> ChangeSet:
    """Which files need a look: the cheap check is modification time and size."""
    changes = ChangeSet()
    for path in sorted(disk):
        known = indexed.get(path)
        if known is None:
            changes.added.append(path)
        elif known != disk[path]:
            changes.modified.append(path)
    changes.removed = sorted(set(indexed) - set(disk))
    return changes
