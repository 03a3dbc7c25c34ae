"""Domain types shared by every part of memstack.

All are frozen dataclasses: values, not handles. HTTP schemas live in the server, not here.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from memstack.errors import InputError

__all__ = [
    "BADGE_ACTIONS",
    "MAX_CONTENT_CHARS",
    "AgentRecord",
    "ApiKey",
    "ArchiveHit",
    "ArchivedTurn",
    "Artifact",
    "BaseTruthDiff",
    "BaseTruthSnapshot",
    "Candidate",
    "Category",
    "ChatDone",
    "ChatEvent",
    "ChatResult",
    "ChatToken",
    "ChatToolEvent",
    "DeletedBy",
    "Exchange",
    "Fact",
    "Fragment",
    "FragmentStatus",
    "HistoryAction",
    "Job",
    "JobStatus",
    "Layer",
    "Manifest",
    "ManifestEntry",
    "Memory",
    "MemoryEvent",
    "MemoryFilter",
    "MemoryPatch",
    "MemoryUpdate",
    "MemoryUsage",
    "NewMemory",
    "RawMessage",
    "ReembedResult",
    "Route",
    "ScoredMemory",
    "SessionState",
    "SessionSummary",
    "Source",
    "ToolUse",
    "TurnCommit",
    "TurnStatus",
    "TurnSummary",
    "UpdateAction",
    "UserRef",
    "Vector",
    "new_id",
    "new_ids",
    "utcnow",
]

Vector = npt.NDArray[np.float32]

#: Longest memory content accepted; longer text is a document, not a memory.
MAX_CONTENT_CHARS = 2000


def utcnow() -> datetime:
    return datetime.now(UTC)


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id(prefix: str) -> str:
    """A sortable unique id: ``prefix_`` + 48-bit millisecond time + 80 random bits, base32."""
    n = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        n, r = divmod(n, 32)
        chars.append(_CROCKFORD[r])
    return f"{prefix}_{''.join(reversed(chars))}"


def new_ids(prefix: str, n: int) -> list[str]:
    """``n`` ids of :func:`new_id`'s format at once (bulk inserts): 10 time characters, 16 random ones."""
    if n <= 0:
        return []
    stamp = new_id(prefix)[: len(prefix) + 11]  # prefix, "_", the 48-bit millisecond time
    bits = np.unpackbits(np.frombuffer(os.urandom(10 * n), dtype=np.uint8).reshape(n, 10), axis=1)
    digits = bits.reshape(n, 16, 5) @ np.array([16, 8, 4, 2, 1], dtype=np.uint8)
    alphabet = np.frombuffer(_CROCKFORD.encode(), dtype=np.uint8)
    chars = alphabet[digits].tobytes().decode()
    return [stamp + chars[16 * i : 16 * (i + 1)] for i in range(n)]


class Category(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    GOAL = "goal"
    LEARNINGSTYLE = "learningstyle"
    SCHEDULE = "schedule"
    GENERAL = "general"

    @classmethod
    def parse(cls, value: str) -> Category:
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(c.value for c in cls)
            raise InputError(f"unknown category {value!r}; use one of: {allowed}") from None


class Source(StrEnum):
    AUTO = "auto"  # saved by the classifier
    EXPLICIT = "explicit"  # the user said "remember ..."
    MANUAL = "manual"  # added through the API, CLI or UI
    CONSOLIDATED = "consolidated"  # merged from several memories


class DeletedBy(StrEnum):
    AI = "ai"  # soft delete by the assistant's forget tool: restorable
    USER = "user"  # the user's own delete (a permanent delete removes the row)


class HistoryAction(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    SUPERSEDE = "supersede"  # a contradicting newer fact replaced this content
    FORGET = "forget"
    RESTORE = "restore"
    MERGE = "merge"  # consolidated into another memory
    DELETE = "delete"  # permanent delete: the history row outlives the memory


@dataclass(frozen=True, slots=True)
class UserRef:
    """Whose data: every store call is scoped by tenant and user inside the query."""

    user_id: str
    tenant: str = "default"

    def __post_init__(self) -> None:
        for name in ("user_id", "tenant"):
            value = getattr(self, name)
            if not value or len(value) > 200 or not value.isprintable():
                raise InputError(f"{name} must be 1-200 printable characters, got {value!r}")


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a caller supplies to store a memory; the store assigns id and timestamps."""

    content: str
    category: Category = Category.GENERAL
    source: Source = Source.MANUAL
    confidence: float = 1.0
    agent_id: str | None = None
    observed_at: datetime | None = None
    expires_at: datetime | None = None
    source_turn_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_content(self.content)
        if not 0.0 <= self.confidence <= 1.0:
            raise InputError(f"confidence must be between 0 and 1, got {self.confidence}")


def check_content(content: str) -> None:
    if not content or not content.strip():
        raise InputError("memory content is empty; send the fact to remember as text")
    if len(content) > MAX_CONTENT_CHARS:
        raise InputError(
            f"memory content is {len(content)} characters; the limit is {MAX_CONTENT_CHARS}. "
            "Store one short fact per memory"
        )


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact a classifier proposes to remember; the capture pipeline dedups it and stores it as a memory.

    ``content`` is a durable third-person statement ("User is a sophomore at UCLA"), dates made absolute.
    ``explicit``: the user asked to remember it. ``observed_at``: when it was said. ``expires_at``: when a schedule
    memory stops being useful. ``evidence``: the part of the message it came from.
    """

    content: str
    category: Category
    confidence: float
    explicit: bool = False
    observed_at: datetime | None = None
    expires_at: datetime | None = None
    evidence: str = ""

    def __post_init__(self) -> None:
        check_content(self.content)
        if not 0.0 <= self.confidence <= 1.0:
            raise InputError(f"confidence must be between 0 and 1, got {self.confidence}")

    def to_new_memory(self, *, agent_id: str | None = None, source_turn_ids: tuple[str, ...] = ()) -> NewMemory:
        return NewMemory(
            content=self.content,
            category=self.category,
            source=Source.EXPLICIT if self.explicit else Source.AUTO,
            confidence=self.confidence,
            agent_id=agent_id,
            observed_at=self.observed_at,
            expires_at=self.expires_at,
            source_turn_ids=source_turn_ids,
        )


@dataclass(frozen=True, slots=True)
class MemoryPatch:
    """Fields to change; ``None`` leaves a field as it is. Changing content re-embeds."""

    content: str | None = None
    category: Category | None = None
    confidence: float | None = None
    expires_at: datetime | None = None
    observed_at: datetime | None = None
    source_turn_ids: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.content is not None:
            check_content(self.content)


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    user_id: str
    tenant: str
    agent_id: str | None
    content: str
    category: Category
    source: Source
    confidence: float
    is_active: bool
    deleted_by: DeletedBy | None
    created_at: datetime
    updated_at: datetime
    observed_at: datetime | None = None
    expires_at: datetime | None = None
    merged_into: str | None = None
    source_turn_ids: tuple[str, ...] = ()
    embedding: Vector | None = field(default=None, compare=False, repr=False)

    def snapshot(self) -> dict[str, Any]:
        """The JSON-able state recorded in history (no vector)."""
        return {
            "content": self.content,
            "category": self.category.value,
            "source": self.source.value,
            "confidence": self.confidence,
            "is_active": self.is_active,
            "deleted_by": self.deleted_by.value if self.deleted_by else None,
            "observed_at": self.observed_at.isoformat() if self.observed_at else None,
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "merged_into": self.merged_into,
            "source_turn_ids": list(self.source_turn_ids),
        }


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """One row of a memory's append-only history."""

    id: int
    memory_id: str
    action: HistoryAction
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    at: datetime
    actor: str  # "ai", "user", "system"
    note: str = ""


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    memory: Memory
    score: float  # cosine similarity for vector search, a rank score for text search


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    categories: tuple[Category, ...] = ()
    text: str | None = None  # full-text match on content
    agent_id: str | None = None  # memories of this agent plus the user's shared ones
    include_deleted: bool = False
    limit: int = 100
    offset: int = 0


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """How much of a user's tier limit their active memories use."""

    tier: str
    active: int
    limit: int | None  # None: unlimited

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(self.limit - self.active, 0)


@dataclass(frozen=True, slots=True)
class ReembedResult:
    """What ``memstack reembed`` did: the model the store uses now and the one it came from, how many vectors this
    run embedded (``resumed``: how many an interrupted run had already staged) in how many batches, and whether
    the store switched (``False`` when it already used that model)."""

    embedder: str
    dim: int
    from_embedder: str | None
    from_dim: int | None
    vectors: int
    batches: int
    seconds: float
    resumed: int = 0
    switched: bool = True


class Layer(IntEnum):
    """The context stack. Order is authority and trim priority (DESIGN §2)."""

    CORE = 1
    CHARACTERISTICS = 2
    SESSION = 3
    DELEGATED = 4
    FACTS = 5
    MEMORY = 6
    SUMMARIES = 7
    TURN_LOG = 8
    THREAD = 9
    CURRENT = 10

    @property
    def label(self) -> str:
        return self.name.lower()


class FragmentStatus(StrEnum):
    KEPT = "kept"
    TRIMMED = "trimmed"
    QUARANTINED = "quarantined"


@dataclass(frozen=True, slots=True)
class Fragment:
    """One piece of text in the assembled context, with where it came from.

    ``layer`` is a built-in :class:`Layer` or the key of a layer added to a context stack
    (``memstack.context.stack``); ``label`` is the key either way.
    """

    layer: Layer | str
    source: str  # e.g. "agent:tutor#core", "memory:mem_...", "turn:12"
    text: str
    tokens: int = 0
    pinned: bool = False  # never trimmed
    flags: tuple[str, ...] = ()
    status: FragmentStatus = FragmentStatus.KEPT
    reason: str = ""
    role: str | None = None  # chat role for layers 9-10
    score: float | None = None  # retrieval score for layer 6

    @property
    def label(self) -> str:
        return self.layer.label if isinstance(self.layer, Layer) else self.layer


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
    updated_at: datetime | None = None
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


# --- tenants: API keys and stored agent definitions ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key's record. The secret is shown once when the key is created; only its SHA-256 is stored.

    ``id`` (``key_…``) is public: list and revoke by it. ``prefix`` is the start of the secret, to recognise a key."""

    id: str
    tenant: str
    name: str
    prefix: str
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """An agent definition stored for one tenant: the plain (YAML/JSON) values ``memstack.context`` loads."""

    tenant: str
    name: str
    definition: dict[str, Any]
    created_at: datetime
    updated_at: datetime


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


# --- context manifests -----------------------------------------------------------------------------------------------
# What the model saw for one response: every fragment of an assembly (memstack.context) with its layer, source id,
# tokens, status and flags. JSON-able, so a ContextStore keeps one per response for `memstack context explain`.


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    layer: str
    source: str
    tokens: int
    status: FragmentStatus
    flags: tuple[str, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The wire form of ``memstack context render --json``: layer, source, tokens, status, flags."""
        return {
            "layer": self.layer,
            "source": self.source,
            "tokens": self.tokens,
            "status": self.status.value,
            "flags": list(self.flags),
        }


@dataclass(frozen=True, slots=True)
class Manifest:
    context_id: str
    created_at: datetime
    agent: str
    fingerprint: str
    model: str | None
    encoding: str
    budget_tokens: int
    tokens: int
    memory_enabled: bool
    temporary: bool
    entries: tuple[ManifestEntry, ...]

    @property
    def persist(self) -> bool:
        """False for a temporary chat: nothing of this turn may be stored (not even this manifest)."""
        return not self.temporary

    def count(self, status: FragmentStatus) -> int:
        return sum(1 for entry in self.entries if entry.status is status)

    def to_dict(self) -> dict[str, Any]:
        return {
            "context_id": self.context_id,
            "created_at": self.created_at.isoformat(),
            "agent": self.agent,
            "fingerprint": self.fingerprint,
            "model": self.model,
            "encoding": self.encoding,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "memory_enabled": self.memory_enabled,
            "temporary": self.temporary,
            "entries": [{**entry.to_dict(), "reason": entry.reason} for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Manifest:
        try:
            return cls(
                context_id=str(data["context_id"]),
                created_at=datetime.fromisoformat(str(data["created_at"])),
                agent=str(data["agent"]),
                fingerprint=str(data["fingerprint"]),
                model=None if data.get("model") is None else str(data["model"]),
                encoding=str(data["encoding"]),
                budget_tokens=int(data["budget_tokens"]),
                tokens=int(data["tokens"]),
                memory_enabled=bool(data["memory_enabled"]),
                temporary=bool(data["temporary"]),
                entries=tuple(
                    ManifestEntry(
                        layer=str(e["layer"]),
                        source=str(e["source"]),
                        tokens=int(e["tokens"]),
                        status=FragmentStatus(e["status"]),
                        flags=tuple(str(f) for f in e.get("flags", ())),
                        reason=str(e.get("reason", "")),
                    )
                    for e in data["entries"]
                ),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a context manifest ({exc}); it must come from Manifest.to_dict()") from None


def check_manifest(manifest: Manifest, session_id: str | None = None) -> str:
    """The JSON a store keeps for ``manifest``. A temporary chat's manifest may not be stored (``InputError``)."""
    if manifest.temporary:
        raise InputError(f"context {manifest.context_id} belongs to a temporary chat; nothing of it may be stored")
    if not manifest.context_id or len(manifest.context_id) > 200:
        raise InputError(f"context id must be 1-200 characters, got {manifest.context_id!r}")
    if session_id is not None and (not session_id or len(session_id) > 200):
        raise InputError(f"session_id must be 1-200 characters or None, got {session_id!r}")
    return json.dumps(manifest.to_dict(), ensure_ascii=False, separators=(",", ":"))


class UpdateAction(StrEnum):
    """What the capture pipeline (or the save tool) did with one candidate: the badge's ``action``."""

    CREATED = "created"  # stored as a new memory
    UPDATED = "updated"  # superseded an older memory it contradicts (history kept)
    DUPLICATE = "duplicate"  # already remembered: nothing stored
    DROPPED_LIMIT = "dropped_limit"  # the user's tier is full: nothing stored


@dataclass(frozen=True, slots=True)
class MemoryUpdate:
    """One entry of a response's ``memory_updates`` badge.

    ``id`` is the memory created, updated or duplicated (``None`` when nothing was stored); ``content`` is what is
    remembered now (for a duplicate, the existing memory's text)."""

    id: str | None
    content: str
    category: Category
    action: UpdateAction

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "content": self.content, "category": self.category.value, "action": self.action.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryUpdate:
        try:
            return cls(
                id=None if data.get("id") is None else str(data["id"]),
                content=str(data["content"]),
                category=Category.parse(str(data["category"])),
                action=UpdateAction(str(data["action"])),
            )
        except (KeyError, ValueError) as exc:
            raise InputError(f"not a memory update ({exc}); it must come from MemoryUpdate.to_dict()") from None


# --- durable background work ----------------------------------------------------------------------------------------


class JobStatus(StrEnum):
    PENDING = "pending"  # recorded, waiting to run (or to be retried after ``run_after``)
    RUNNING = "running"  # claimed by ``owner`` until ``lease_until``; a lapsed lease makes it claimable again
    DONE = "done"  # finished; ``result`` holds the outcome (the payload is dropped)
    FAILED = "failed"  # given up; ``error`` says why


@dataclass(frozen=True, slots=True)
class Job:
    """One unit of durable background work (a memory detection, a consolidation…), recorded before it starts.

    ``key`` makes recording idempotent: enqueueing the same key again returns the recorded job. ``state`` is the
    worker's checkpoint (what is already done), so a resumed job continues instead of starting over."""

    id: str
    kind: str
    key: str
    payload: Mapping[str, Any]
    status: JobStatus
    attempts: int
    created_at: datetime
    updated_at: datetime
    owner: str | None = None
    lease_until: datetime | None = None
    run_after: datetime | None = None
    state: Mapping[str, Any] = field(default_factory=dict)
    result: Mapping[str, Any] | None = None
    error: str | None = None


# --- chat turns ------------------------------------------------------------------------------------------------------
# What AsyncMemstack.chat returns, and the events of AsyncMemstack.chat_stream.


#: Memory updates that show the "Memory updated" badge.
BADGE_ACTIONS = frozenset({UpdateAction.CREATED, UpdateAction.UPDATED})


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call the chat model made during a turn, and what was sent back to it. ``updates``: memories the
    call saved (they join the turn's badge); ``upgrade_prompt``: an explicit save refused at the tier limit."""

    name: str
    arguments: Mapping[str, Any]
    result: str  # the tool message content (JSON text)
    error: bool = False
    updates: tuple[MemoryUpdate, ...] = ()
    upgrade_prompt: str | None = None


@dataclass(frozen=True, slots=True)
class ChatResult:
    """One answered chat turn.

    ``memory_updates``: what detection saved from this message if it finished within ``badge_wait_s`` (the badge);
    ``memory_pending`` says it was still running when the reply left (it saves anyway). ``context_id`` names the
    stored manifest (what the model saw); ``None`` for a temporary chat, which stores nothing. ``memories_refused``:
    candidates detection did not store because they read as instructions to the assistant (memory poisoning).
    ``memories_used``: ids of the long-term memories placed in the context (transparency). ``offline``: the reply
    comes from the offline responder, not from a model."""

    session_id: str
    reply: str
    turn: int
    memory_updates: tuple[MemoryUpdate, ...] = ()
    context_id: str | None = None
    upgrade_prompt: str | None = None
    memory_pending: bool = False
    memories_refused: tuple[str, ...] = ()
    memories_used: tuple[str, ...] = ()
    tool_uses: tuple[ToolUse, ...] = ()
    model: str = ""
    offline: bool = False
    memory_enabled: bool = True
    temporary: bool = False
    manifest: Manifest | None = field(default=None, compare=False, repr=False)

    @property
    def badge(self) -> tuple[MemoryUpdate, ...]:
        """The updates the "Memory updated" badge shows: memories created or updated by this message."""
        return tuple(u for u in self.memory_updates if u.action in BADGE_ACTIONS)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: what ``POST /v1/chat`` answers (the manifest itself is fetched by ``context_id``)."""
        return {
            "session_id": self.session_id,
            "reply": self.reply,
            "turn": self.turn,
            "memory_updates": [u.to_dict() for u in self.memory_updates],
            "context_id": self.context_id,
            "upgrade_prompt": self.upgrade_prompt,
            "memory_pending": self.memory_pending,
            "memories_refused": list(self.memories_refused),
            "memories_used": list(self.memories_used),
            "tool_uses": [{"name": t.name, "arguments": dict(t.arguments), "error": t.error} for t in self.tool_uses],
            "model": self.model,
            "offline": self.offline,
            "memory_enabled": self.memory_enabled,
            "temporary": self.temporary,
        }


@dataclass(frozen=True, slots=True)
class ChatToken:
    """A piece of the reply's text, as the model streams it."""

    text: str


@dataclass(frozen=True, slots=True)
class ChatToolEvent:
    """The model called a tool (between token events); ``use.result`` is what it got back."""

    use: ToolUse


@dataclass(frozen=True, slots=True)
class ChatDone:
    """The last event of a stream: the whole turn, with memory updates, context id and session id."""

    result: ChatResult


ChatEvent: TypeAlias = ChatToken | ChatToolEvent | ChatDone
