"""Per-session memory: base-truth facts and their diffs, the turn log, the raw window and the archive."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = [
    "ArchiveHit",
    "ArchivedTurn",
    "Artifact",
    "BaseTruthDiff",
    "BaseTruthSnapshot",
    "Exchange",
    "Fact",
    "RawMessage",
    "Route",
    "SessionState",
    "SessionSummary",
    "TurnCommit",
    "TurnStatus",
    "TurnSummary",
]


@dataclass(frozen=True, slots=True)
class Fact:
    """A base-truth entry of a session; hard exceptions are never pruned or trimmed."""

    text: str
    hard_exception: bool = False
    since_turn: int = 0


@dataclass(frozen=True, slots=True)
class TurnSummary:
    turn: int
    user_summary: str
    assistant_summary: str
    unsummarized: bool = False  # raw fallback stored; a background retry is due


@dataclass(frozen=True, slots=True)
class RawMessage:
    role: str  # user | assistant | tool
    content: str
    turn: int
    at: datetime | None = None
    keep_extra_turns: int = 0  # long messages stay in the window a little longer


@dataclass(frozen=True, slots=True)
class SessionState:
    session_id: str
    user_id: str
    tenant: str
    agent: str | None
    turn_count: int
    base_truth: tuple[Fact, ...] = ()
    turn_log: tuple[TurnSummary, ...] = ()
    raw_window: tuple[RawMessage, ...] = ()
    created_at: datetime | None = None
    updated_at: datetime | None = None  # the last turn, start or end: background summaries are not activity
    ended_at: datetime | None = None
    version: int = 0  # bumped by every committed turn: a commit built on an older state is refused
    last_consolidated_turn: int = 0
    flagged_turns: tuple[int, ...] = ()  # recorded turns whose summary is still due (pending or unsummarized)


class Route(StrEnum):
    """How deeply one exchange is summarized (seed 04 §6)."""

    SHORT = "short"  # summary only
    MEDIUM = "medium"  # summary + base-truth diff
    LONG = "long"  # summary + diff + the reply kept longer in the raw window
    CODE = "code"  # code-heavy: always a diff


@dataclass(frozen=True, slots=True)
class Exchange:
    """One user message and the assistant's reply to it: what the summarizer reads."""

    turn: int
    user: str
    assistant: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class BaseTruthDiff:
    """A summarizer's proposed change to base truth, applied remove → update → add.

    ``update`` entries are complete replacement strings (``"Python version: 3.12"``); ``hard`` lists the
    entries of ``add``/``update`` that are hard constraints (things that must never/always be done).
    """

    add: tuple[str, ...] = ()
    update: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    hard: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.add or self.update or self.remove)


@dataclass(frozen=True, slots=True)
class Artifact:
    """A code block or draft cut from one turn, kept verbatim so "the version from turn 3" can be found again.

    ``kind`` is ``code`` or ``draft``; ``role`` says whose message it came from; ``index`` orders several artifacts
    of one turn. Stores fill ``session_id`` and ``created_at``."""

    turn: int
    kind: str
    content: str
    role: str = "assistant"
    language: str = ""
    label: str = ""
    index: int = 0
    session_id: str = ""
    created_at: datetime | None = None


class TurnStatus(StrEnum):
    """Where one archived exchange stands in phase 2 (the second half of a chat turn)."""

    PENDING = "pending"  # recorded; phase 2 running or interrupted (a crash): summarized on restart
    UNSUMMARIZED = "unsummarized"  # raw-text fallback in the turn log; a background retry is due
    SUMMARIZED = "summarized"
    FALLBACK = "fallback"  # raw-text fallback kept for good: retries used up, or not retried


@dataclass(frozen=True, slots=True)
class ArchivedTurn:
    """One raw exchange of a session as archived, with what phase 2 made of it.

    ``turn_id`` (``session_id:turn``) names it across sessions. ``keep_extra`` is how many turns longer the user's
    and the assistant's message stay in the raw window (long messages). ``user_summary``/``assistant_summary`` are
    the turn-log entry once written."""

    session_id: str
    turn: int
    user: str
    assistant: str
    at: datetime
    status: TurnStatus = TurnStatus.PENDING
    user_id: str = ""
    tenant: str = "default"
    route: str = ""
    keep_extra: tuple[int, int] = (0, 0)
    user_summary: str = ""
    assistant_summary: str = ""
    outcome: str = ""
    attempts: int = 0
    error: str = ""
    flags: tuple[str, ...] = ()

    @property
    def turn_id(self) -> str:
        return f"{self.session_id}:{self.turn}"

    @property
    def exchange(self) -> Exchange:
        return Exchange(self.turn, self.user, self.assistant, self.at)

    @property
    def flagged(self) -> bool:
        return self.status in (TurnStatus.PENDING, TurnStatus.UNSUMMARIZED)


@dataclass(frozen=True, slots=True)
class ArchiveHit:
    """A full-text match in a user's archive of past exchanges, best first."""

    turn_id: str  # session_id:turn
    session_id: str
    turn: int
    user: str
    assistant: str
    at: datetime
    score: float  # higher is better

    @property
    def text(self) -> str:
        return f"User: {self.user}\nAssistant: {self.assistant}"


@dataclass(frozen=True, slots=True)
class BaseTruthSnapshot:
    """Base truth as it stood after ``turn`` (monitoring, seed 04 §7); ``reason``: periodic, consolidation, end…"""

    turn: int
    reason: str
    facts: tuple[Fact, ...]
    session_id: str = ""
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TurnCommit:
    """What phase 2 writes in one transaction: the turn-log entry, the new base truth and everything beside it.

    ``expected_version`` is the :attr:`SessionState.version` the work was based on; a store refuses the commit
    (``SessionConflict``) when the session changed since."""

    turn: int
    status: TurnStatus
    summary: TurnSummary
    base_truth: tuple[Fact, ...]
    expected_version: int
    outcome: str = ""
    attempts: int = 1
    error: str = ""
    flags: tuple[str, ...] = ()
    artifacts: tuple[Artifact, ...] = ()
    snapshots: tuple[BaseTruthSnapshot, ...] = ()
    consolidated: bool = False


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A session as listed, with its cross-session line (layer 7: one short line about the user's past session)."""

    session_id: str
    user_id: str
    tenant: str
    agent: str | None
    turn_count: int
    line: str = ""
    line_turn: int = 0  # the turn the line was written after (stale when below turn_count)
    flagged: int = 0  # turns whose summary is still due
    created_at: datetime | None = None
    updated_at: datetime | None = None
    ended_at: datetime | None = None
