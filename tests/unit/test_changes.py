from hypothesis import given
from hypothesis import strategies as st

from amem_cli.vault import FileStat
from amem_cli.changes import plan_changes

_stat = st.builds(FileStat, st.integers(0, 5), st.integers(0, 5))
_files = st.dictionaries(st.sampled_from([f"{c}.md" for c in "abcdefgh"]), _stat)


def test_plan_changes_examples():
    disk = {"a.md": FileStat(1, 10), "b.md": FileStat(2, 20), "c.md": FileStat(3, 30)}
    known = {"a.md": FileStat(1, 10), "b.md": FileStat(2, 21), "d.md": FileStat(4, 40)}
    changes = plan_changes(disk, known)
    assert changes.added == ["c.md"]
    assert changes.modified == ["b.md"]
    assert changes.removed == ["d.md"]
    assert len(changes) == 3


@given(_files, _files)
def test_plan_changes_partitions(disk, known):
    changes = plan_changes(disk, known)
    assert set(changes.added) == set(disk) - set(known)
    assert set(changes.removed) == set(known) - set(disk)
    assert set(changes.modified) == {p for p in set(disk) & set(known) if disk[p] != known[p]}
    # Applying the plan makes the index equal to the disk.
    after = {p: s for p, s in known.items() if p not in changes.removed}
    after.update({p: disk[p] for p in changes.added + changes.modified})
    assert after == disk
    assert not plan_changes(disk, after)
