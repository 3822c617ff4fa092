"""Which facts are current: supersessions made, undone and suggested, near-duplicates
merged, expired notes forgotten."""

from . import Request
from ..records import Record


class SupersedeResult(Record):
    old: str
    new: str
    supersedes: bool  # whether NEW supersedes OLD now


class Suggestion(Record):
    """A pair the supersession detector was unsure of, for a person or an agent to confirm."""

    old: str
    new: str
    reason: str  # which value seems to have changed
    old_date: str | None
    new_date: str | None
    old_content: str
    new_content: str


class Consolidated(Record):
    kept: str  # the note that stays, with every date the others were said
    merged: list[str]  # moved to the trash
    dates: list[str]


class ConsolidateResult(Record):
    groups: list[Consolidated]
    dry_run: bool


class ForgetResult(Record):
    removed: list[str]  # the expired notes (that would be) moved to the trash
    dry_run: bool
    recoverable: bool  # whether `undo` can bring them back


# -- requests ----------------------------------------------------------------------


class Supersede(Request, op="supersede", result=SupersedeResult):
    """NEW supersedes OLD (`undo`: it does not, or a suggestion of it is dismissed)."""

    old: str
    new: str
    undo: bool = False


class SupersedeSuggestions(Request, op="supersede_suggestions", result=list[Suggestion], redo=True):
    """The pairs the detector was unsure of, newest first."""


class Consolidate(Request, op="consolidate", result=ConsolidateResult):
    """Near-duplicates merged into their earliest note; the others to the trash."""

    dry_run: bool = False


class ForgetExpired(Request, op="forget_expired", result=ForgetResult):
    """Expired notes to the trash."""

    dry_run: bool = False
