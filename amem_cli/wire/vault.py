"""The vault as a whole: making it, its boxes, graph and stats, its status and health, its settings."""

from typing import Any

from . import Request
from ..records import Record, encode
from .queue import QueueSummary


class BoxCount(Record):
    box: str
    notes: int


class BoxesRebuilt(Record):
    """What `amem boxes --rebuild` did."""

    filed: int  # notes amem filed (again)
    moved: int  # of those, the notes now in another box (each a revision)
    kept: int  # notes left as they are: boxes a person gave or moved them into, pinned, not embedded yet
    boxes: list[BoxCount]  # where amem filed its notes, biggest first


class GraphStats(Record):
    """How the link graph has grown: the small-world measures of the A-MEM write-up."""

    notes: int
    links: int  # A-MEM links (each counted once), without sequence links
    sequence_links: int
    links_per_note: float
    components: int
    largest_component: int
    diameter: int  # of the largest component, over links and sequence links
    diameter_exact: bool
    clustering: float  # average clustering coefficient
    boxes: int


class GraphResult(Record):
    text: str  # the graph in `format`
    format: str
    notes: int
    links: int  # as `status` and `stats` count them, among these notes
    sequence_links: int


class ReindexResult(Record):
    notes: int
    embedded: int
    errors: list[str]


class SyncResult(Record):
    added: int
    updated: int
    removed: int
    errors: list[str]


class Status(Record):
    """What `amem status --json` prints: how the index stands against the files."""

    vault: str
    notes: int
    indexed: int
    embedded: int
    links: int  # pairs of linked notes, as `stats` and `graph` count them
    sequence_links: int
    boxes: int
    pending_changes: int
    embedding_model: str | None
    embedding_dimensions: int | None
    vector_store: str
    errors: list[str] = []
    queue: QueueSummary | None = None


class VaultStatusResult(Record):
    status: Status
    read_only: bool  # amem changes nothing in the vault (its index is kept in `index_dir`)
    index_dir: str


# Problems only a person can mend (a fix would be a guess at what they meant).
PERSON = {"bad_file", "dangling_link", "second_frontmatter"}


class Problem(Record):
    kind: str  # a stable name, e.g. "missing_vector" (see `services.doctor`)
    subject: str  # the note id or path it is about
    detail: str  # one line for a person
    hint: str = ""  # what to do, when `--fix` does not do it

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"

    to_dict = Record.to_json


class DoctorReport(Record):
    problems: list[Problem] = []
    fixed: list[str] = []  # what --fix did, one line each
    warnings: list[str] = []  # shown, not counted as problems (an id used twice)
    notes: int = 0  # note files on disk

    derived = ("ok", "summary")

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def for_a_person(self) -> bool:
        """Every problem is one `--fix` does not mend: a person must edit a file."""
        return bool(self.problems) and self.kinds() <= PERSON

    def kinds(self) -> set[str]:
        return {p.kind for p in self.problems}

    def summary(self) -> str:
        if self.ok:
            return f"consistent: {plural(self.notes, 'note')}"
        counts: dict[str, int] = {}
        for p in self.problems:
            counts[p.kind] = counts.get(p.kind, 0) + 1
        return f"{plural(len(self.problems), 'problem')}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "notes": self.notes, "summary": self.summary(), "problems": encode(self.problems),
                "fixed": list(self.fixed), "warnings": list(self.warnings)}

    to_dict = to_json  # (the Python API's name for it)


def plural(n: int, word: str) -> str:
    """`1 note`, `2 notes`."""
    return f"{n} {word}{'' if n == 1 else 's'}"


class DoctorResult(Record):
    report: DoctorReport
    for_a_person: bool  # only a person can mend what is wrong


class InitResult(Record):
    vault: str
    notes: int
    indexed: int  # notes indexed now
    profile: str | None

class Init(Request, op="init", result=InitResult, served=False):
    """Make the vault ready: its folder and index, a .gitignore that leaves the index
    out, and with a `profile` its amem.toml. (Not served: it makes the vault a server
    would serve, and writes the user's own record of trusted vaults.)"""

    profile: str | None = None


class Boxes(Request, op="boxes", result=list[BoxCount]):
    pass


class RebuildBoxes(Request, op="rebuild_boxes", result=BoxesRebuilt):
    """File the notes amem filed into the vault's topics again (`amem boxes --rebuild`)."""


class Stats(Request, op="stats", result=GraphStats):
    pass


class Graph(Request, op="graph", result=GraphResult):
    format: str = "mermaid"  # mermaid, dot, graphml, json, or html (a page)
    around: str | None = None
    depth: int = 2
    tags: list[str] | None = None
    boxes: list[str] | None = None


class Sync(Request, op="sync", result=SyncResult):
    """Pick up the files others changed, now."""


class Reindex(Request, op="reindex", result=ReindexResult):
    pass


class VaultStatus(Request, op="vault_status", result=VaultStatusResult):  # "status" is the server's own
    pass


class Doctor(Request, op="doctor", result=DoctorResult):
    fix: bool = False


class Config(Request, op="config", result=dict[str, Any], served=False):
    """The settings in effect, as text and numbers, and under `sources` where each came
    from ({setting: {"source": one of `config.SOURCES`, "where": the file, variable or
    flag, or null}}). `flags`: the command's global options given. (Not served: the
    sources are the command's own environment and flags, not a server's.)"""

    flags: dict[str, Any] | None = None
