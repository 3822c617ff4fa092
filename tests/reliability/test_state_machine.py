"""A Hypothesis state machine over what happens to a vault: amem adds, evolves, deletes
and reindexes; a person edits, renames and deletes files by hand; and amem dies at a
random file write (an exception at the rename: the temp file stays, nothing after runs).

After every step, once amem has looked at the files (a sync): `amem doctor` finds the
vault consistent after amem's own operations; after a person's change or a crash,
`doctor --fix` makes it so, but for the links to notes a person deleted, which doctor
reports and keeps (they are the person's to mend); and the files hold exactly the notes
the model expects, each with its exact text. (tests/reliability/test_crash.py kills real processes.)"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

sys.path.insert(0, str(Path(__file__).parent))

from crashes import eager_reply  # noqa: E402

from amem_cli import AgentMemory  # noqa: E402
from amem_cli.llm.fake import ScriptedLLM  # noqa: E402
from amem_cli.markdown import parse_note, render_note  # noqa: E402

WORDS = "lighthouse keeper weather storm harbour ferry tide lantern fog gull".split()
TEXT = st.lists(st.sampled_from(WORDS), min_size=3, max_size=8).map(" ".join)


class Crash(BaseException):
    """amem dying half-way (BaseException: no `except Exception` in amem swallows it)."""


class VaultMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="amem-states-"))
        self.expected: dict[str, str] = {}  # note id -> its text: what the vault must hold
        self.by_hand = False  # the last step changed files behind amem's back, or crashed
        self.deleted_by_hand: set[str] = set()
        self.renames = 0
        self.mem = self._open()

    def _open(self) -> AgentMemory:
        return AgentMemory(self.root, embedder="fake", llm=ScriptedLLM(default=eager_reply), link_threshold=0.0)

    def teardown(self):
        self.mem.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _files(self) -> dict[str, Path]:
        """Note id -> its file, read from the files themselves."""
        return {parse_note(p.read_text(encoding="utf-8")).id: p for p in self.root.glob("*.md")}

    def _pick(self, data) -> str:
        return data.draw(st.sampled_from(sorted(self.expected)))

    # -- amem -------------------------------------------------------------------
    @rule(text=TEXT)
    def add(self, text):
        note = self.mem.add(text)
        self.expected[note.id] = note.content

    @rule(texts=st.lists(TEXT, min_size=2, max_size=4))
    def add_many(self, texts):
        for note in self.mem.add_many([{"content": t} for t in texts]):
            self.expected[note.id] = note.content

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def evolve(self, data):
        self.mem.evolve(self._pick(data))

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def delete(self, data):
        note_id = self._pick(data)
        self.mem.delete(note_id)
        del self.expected[note_id]

    @rule()
    def reindex(self):
        self.mem.reindex()

    # -- a person -----------------------------------------------------------------
    @precondition(lambda self: self.expected)
    @rule(data=st.data(), text=TEXT)
    def edit_by_hand(self, data, text):
        note_id = self._pick(data)
        path = self._files()[note_id]
        note = parse_note(path.read_text(encoding="utf-8"))
        note.content = text
        path.write_text(render_note(note), encoding="utf-8")
        self.expected[note_id] = text
        self.by_hand = True

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def rename_by_hand(self, data):
        path = self._files()[self._pick(data)]
        self.renames += 1
        path.rename(path.with_name(f"renamed {self.renames}.md"))
        self.by_hand = True

    @precondition(lambda self: self.expected)
    @rule(data=st.data())
    def delete_by_hand(self, data):
        note_id = self._pick(data)
        self._files()[note_id].unlink()
        del self.expected[note_id]
        self.deleted_by_hand.add(note_id)
        self.by_hand = True

    # -- a crash --------------------------------------------------------------------
    @rule(data=st.data(), op=st.sampled_from(["add", "add_many", "evolve", "delete"]), after=st.integers(0, 6))
    def crash(self, data, op, after):
        """amem dies at the rename of its (after+1)-th file write in `op`."""
        if op in ("evolve", "delete") and not self.expected:
            return
        target = self._pick(data) if op in ("evolve", "delete") else None
        texts = data.draw(st.lists(TEXT, min_size=1, max_size=3))
        import amem_cli.vault as vault_module

        real_replace, writes = vault_module.os.replace, []

        def dying_replace(src, dst, **dir_fds):  # (the trash renames within its folder's descriptor)
            writes.append(dst)
            if len(writes) > after:
                raise Crash()
            real_replace(src, dst, **dir_fds)

        vault_module.os.replace = dying_replace
        try:
            if op == "add":
                self.mem.add(texts[0])
            elif op == "add_many":
                self.mem.add_many([{"content": t} for t in texts])
            elif op == "evolve":
                self.mem.evolve(target)
            else:
                self.mem.delete(target)
        except Crash:
            pass
        finally:
            vault_module.os.replace = real_replace
        self.mem = self._open()  # a new process: the dead one's state is gone with it
        # Adds never acknowledged may or may not have landed; a delete may or may not have.
        on_disk = self._files()
        for note_id in list(self.expected):
            if note_id not in on_disk:
                assert op == "delete" and note_id == target, f"{op} lost {note_id}"
                del self.expected[note_id]
        for note_id, path in on_disk.items():
            if note_id not in self.expected:
                self.expected[note_id] = parse_note(path.read_text(encoding="utf-8")).content
                assert op in ("add", "add_many") and self.expected[note_id] in texts
        self.by_hand = True

    # -- what must hold ----------------------------------------------------------------
    def _wrong(self, problems) -> list:
        """The problems but for links (kept, as a person wrote them) to notes a person deleted."""
        files = self._files()

        def deleted_by_hand(p) -> bool:
            links = parse_note(files[p.subject].read_text(encoding="utf-8")).links
            return set(links) - set(files) <= self.deleted_by_hand

        return [p for p in problems if not (p.kind == "dangling_link" and deleted_by_hand(p))]

    @invariant()
    def consistent(self):
        self.mem.sync()
        report = self.mem.doctor()
        if self._wrong(report.problems):
            assert self.by_hand, f"amem's own operation left: {report.summary()}"
            self.mem.doctor(fix=True)
            report = self.mem.doctor()
            assert not self._wrong(report.problems), report.summary()
        self.by_hand = False
        on_disk = {i: parse_note(p.read_text(encoding="utf-8")).content for i, p in self._files().items()}
        assert on_disk == self.expected


VaultMachine.TestCase.settings = settings(
    max_examples=12, stateful_step_count=12, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

TestVaultStates = VaultMachine.TestCase
