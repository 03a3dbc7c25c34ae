"""Long-term memories: what callers store, what the store returns, their history and what capture did with them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, NoReturn

from memstack.dates import check_time
from memstack.errors import InputError
from memstack.types._core import MAX_CONTENT_CHARS, Vector, check_data, check_text
from memstack.types.usage import ModelUsage

__all__ = [
    "MAX_METADATA_CHARS",
    "AddResult",
    "Candidate",
    "Category",
    "DeletedBy",
    "DroppedCaptures",
    "HistoryAction",
    "Memory",
    "MemoryEvent",
    "MemoryFilter",
    "MemoryPatch",
    "MemoryUpdate",
    "MemoryUsage",
    "NewMemory",
    "ReembedResult",
    "ScoredMemory",
    "Source",
    "UpdateAction",
    "check_as_of",
    "check_content",
    "check_interval",
    "check_metadata",
    "check_metadata_filter",
    "holds_at",
]


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
class NewMemory:
    """What a caller supplies to store a memory; the store assigns id and timestamps. ``metadata``: the caller's
    JSON object kept with it (:func:`check_metadata`), returned with the memory and filterable."""

    content: str
    category: Category = Category.GENERAL
    source: Source = Source.MANUAL
    confidence: float = 1.0
    agent_id: str | None = None
    observed_at: datetime | None = None
    expires_at: datetime | None = None
    source_turn_ids: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: When it held in the user's life (:func:`check_interval`; ``None``: unknown). A memory whose ``valid_to`` has
    #: already passed is stored as a past fact: not current, found by ``as_of`` searches of its time.
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    def __post_init__(self) -> None:
        check_content(self.content)
        if not 0.0 <= self.confidence <= 1.0:
            raise InputError(f"confidence must be between 0 and 1, got {self.confidence}")
        object.__setattr__(self, "metadata", check_metadata(self.metadata))
        check_interval(self.valid_from, self.valid_to)


def _utc(value: datetime, what: str) -> datetime:
    """``value`` as an aware UTC time: a time without a zone is taken as UTC (as the stores do), one outside the
    years :mod:`memstack.dates` reads is ``InputError`` naming ``what``."""
    if not isinstance(value, datetime):
        raise InputError(f"{what} must be a datetime (an ISO 8601 time such as 2026-03-01T00:00:00Z), got {value!r}")
    check_time(value, what)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def check_interval(valid_from: datetime | None, valid_to: datetime | None) -> tuple[datetime | None, datetime | None]:
    """A validity interval as stored (aware, UTC; either end ``None``: unknown), or ``InputError`` for one that ends
    before it starts (an empty one, ``valid_to == valid_from``, is refused too: it held at no time)."""
    start = _utc(valid_from, "valid_from") if valid_from is not None else None
    end = _utc(valid_to, "valid_to") if valid_to is not None else None
    if start is not None and end is not None and end <= start:
        raise InputError(
            f"valid_to ({end.isoformat()}) must be after valid_from ({start.isoformat()}): a memory cannot stop "
            "holding before it starts; leave an end you do not know as null"
        )
    return start, end


def check_as_of(as_of: datetime | None) -> datetime | None:
    """The time an ``as_of`` read asks about, aware and in UTC (``None``: now, the current memories only). A time
    without a zone is taken as UTC; one before year 100 or after 9899 is ``InputError``."""
    return _utc(as_of, "as_of") if as_of is not None else None


def holds_at(memory: Memory, when: datetime) -> bool:
    """Whether ``memory``'s validity interval covers ``when`` (an unknown start is open toward the past, an unknown
    end open toward the future)."""
    start, end = memory.valid_from, memory.valid_to
    return (start is None or start <= when) and (end is None or end > when)


def check_content(content: str) -> None:
    check_text(content, "memory content")
    if not content or not content.strip():
        raise InputError("memory content is empty; send the fact to remember as text")
    if len(content) > MAX_CONTENT_CHARS:
        raise InputError(
            f"memory content is {len(content)} characters; the limit is {MAX_CONTENT_CHARS}. "
            "Store one short fact per memory"
        )


#: Longest metadata accepted, as compact JSON text (``json.dumps(metadata, separators=(",", ":"))``): a few labels
#: about a memory (project, source document, app ids), not a document of its own.
MAX_METADATA_CHARS = 4000

#: The JSON values a metadata filter compares a top-level key with (containers are stored, not filtered on).
_SCALARS = (str, int, float, bool, type(None))


class _Metadata(dict[str, Any]):
    """A memory's metadata: a ``dict`` (``json.dumps`` and ``==`` work as on any dict) that refuses changes, since the
    :class:`Memory` holding it is a value shared with the store's caches. ``dict(memory.metadata)`` is a copy to
    change (then :meth:`~memstack.engine.AsyncMemstack.edit` stores it)."""

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a memory's metadata is read-only; copy it (dict(memory.metadata)) and pass it to edit()")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self) -> tuple[type[_Metadata], tuple[dict[str, Any]]]:  # copy and pickle as a plain dict's items
        return (_Metadata, (dict(self),))


_EMPTY = _Metadata()


def check_metadata(metadata: Mapping[str, Any] | None, what: str = "metadata") -> Mapping[str, Any]:
    """``metadata`` as a memory keeps it (read-only; ``None`` is ``{}``), or ``InputError`` saying what to pass: a
    JSON object (string keys; strings, numbers, booleans, null, lists and objects as values, NaN and infinities
    refused) of at most :data:`MAX_METADATA_CHARS` characters as compact JSON, every string storable
    (:func:`~memstack.types.check_data`). Stored as its JSON text, so a tuple comes back a list."""
    if metadata is None:
        return _EMPTY
    if isinstance(metadata, _Metadata):
        return metadata
    if not isinstance(metadata, Mapping):
        raise InputError(
            f'{what} must be a JSON object (a dict such as {{"project": "apollo"}}), got {type(metadata).__name__}'
        )
    if not metadata:
        return _EMPTY
    check_data(metadata, what)
    stack: list[object] = [metadata]
    while stack:  # JSON would turn a key 1 into "1" silently: refuse it instead
        item = stack.pop()
        if isinstance(item, Mapping):
            if bad := [k for k in item if not isinstance(k, str)]:
                raise InputError(f"{what} has the key {bad[0]!r}; JSON object keys are strings: use {str(bad[0])!r}")
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    try:
        text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{what} is not plain JSON data ({exc}); use string keys and strings, finite numbers, booleans, null, "
            "lists or objects as values"
        ) from None
    if len(text) > MAX_METADATA_CHARS:
        raise InputError(
            f"{what} is {len(text)} characters as JSON; the limit is {MAX_METADATA_CHARS}. Keep a few labels in "
            "metadata (ids, a project, a source) and the document itself elsewhere"
        )
    data = json.loads(text)  # a copy of the caller's object, as it will read back from any store
    return _Metadata(data)


def stored_metadata(value: str | Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The metadata of a stored row (JSON text, or an object a driver already parsed), unchecked: it was checked when
    it was written. For the stores' row readers only."""
    if value is None or value == "{}" or (isinstance(value, Mapping) and not value):
        return _EMPTY
    return _Metadata(json.loads(value) if isinstance(value, str) else value)


def check_metadata_filter(metadata: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A metadata filter (``list(metadata=...)``, ``search(metadata=...)``): memories whose metadata has every key
    given with the same value (exact match on top-level keys; numbers by value, ``1 == 1.0``, but ``true`` is no
    number; ``null`` matches a key stored as null, not a missing one). ``None`` or ``{}``: no filter. Values are
    strings, finite numbers, booleans or null; ``InputError`` otherwise."""
    if metadata is None:
        return None
    checked = check_metadata(metadata, "the metadata filter")
    for key, value in checked.items():
        if not isinstance(value, _SCALARS) or (isinstance(value, float) and not math.isfinite(value)):
            raise InputError(
                f"the metadata filter compares top-level keys with a string, number, boolean or null; {key!r} is "
                f'given a {type(value).__name__}. Filter on a scalar key (e.g. {{"project": "apollo"}})'
            )
    return checked or None


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
    #: When it started to hold, where the sentence says ("I moved to Berlin last month"); ``None``: not said.
    valid_from: datetime | None = None

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
            valid_from=self.valid_from,
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
    metadata: Mapping[str, Any] | None = field(default=None, hash=False)  # replaces the whole object ({}: clears)
    valid_from: datetime | None = None  # checked against the memory's other end when applied
    valid_to: datetime | None = None

    def __post_init__(self) -> None:
        if self.content is not None:
            check_content(self.content)
        if self.metadata is not None:
            object.__setattr__(self, "metadata", check_metadata(self.metadata))
        check_interval(self.valid_from, self.valid_to)


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
    #: The caller's JSON object (read-only; ``{}`` when none was given): see :func:`check_metadata`.
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: When it held in the user's life, besides when memstack recorded it (``created_at``); ``None``: unknown. A
    #: superseded memory's past version ends where its successor starts (:func:`holds_at`).
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    def __post_init__(self) -> None:
        if type(self.metadata) is not _Metadata:  # rows from a store are checked once, where they were written
            object.__setattr__(self, "metadata", check_metadata(self.metadata))

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
            "metadata": dict(self.metadata),
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
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
    """A memory found for a query, with how close it is.

    From ``search`` (vector search), ``score`` is the **cosine similarity** of the query's embedding and the
    memory's: from -1 to 1, higher is closer, 1 the same meaning. It is a similarity, not a probability: a memory
    that answers the query scores clearly above the unrelated ones, whose scores sit near 0 and can be a little
    below it (a negative score only means unrelated, never "the opposite"). Where the line falls depends on the
    embedder and the texts: pick ``min_score`` (results below it are left out) by looking at scores on your own
    data. From the store's full-text search it is a BM25 rank score (0 and up).

    ``vector``: the memory's stored embedding when the search had it at hand (SQLite's in-process index scores the
    vectors it holds; PostgreSQL's search leaves it ``None`` rather than send every vector back). A reader that
    would embed the memory's text with the store's model again (the guard, reading recalled memories) can use it."""

    memory: Memory
    score: float
    vector: Vector | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    categories: tuple[Category, ...] = ()
    text: str | None = None  # full-text match on content
    agent_id: str | None = None  # memories of this agent plus the user's shared ones
    include_deleted: bool = False
    limit: int = 100
    offset: int = 0
    #: Memories whose metadata holds every key with the same value (:func:`check_metadata_filter`).
    metadata: Mapping[str, Any] | None = field(default=None, hash=False)
    #: What held at this time instead of what is current (:func:`check_as_of`): active memories and superseded past
    #: versions whose validity interval covers it; ``None``: the active memories, whatever their interval.
    as_of: datetime | None = None
    #: Past versions only (superseded facts and facts added already over, whatever their interval): what a chat
    #: turn shows beside the current memories so the model can say what held before. Ignored with ``as_of``.
    past: bool = False

    def __post_init__(self) -> None:
        if self.text is not None:
            check_text(self.text, "the text filter")
        object.__setattr__(self, "metadata", check_metadata_filter(self.metadata))
        object.__setattr__(self, "as_of", check_as_of(self.as_of))


@dataclass(frozen=True, slots=True)
class DroppedCaptures:
    """Automatic captures a full tier kept from being stored, for one user: how many, the first and the last time
    (kept in the store: user data, exported and erased with the user)."""

    count: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """How much of a user's tier limit their active memories use (``limit`` ``None``: unlimited), and how many
    automatic captures the limit kept from being stored (``dropped``, the last at ``last_dropped_at``; counted
    whatever tier was full at the time)."""

    tier: str
    active: int
    limit: int | None  # None: unlimited
    dropped: int = 0
    last_dropped_at: datetime | None = None
    models: tuple[ModelUsage, ...] = ()  # model calls for the user, by role (since this process started)

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


class UpdateAction(StrEnum):
    """What the capture pipeline (or the save tool) did with one candidate: the badge's ``action``."""

    CREATED = "created"  # stored as a new memory
    UPDATED = "updated"  # superseded an older memory it contradicts (history kept)
    DUPLICATE = "duplicate"  # already remembered: nothing stored
    DROPPED_LIMIT = "dropped_limit"  # the user's tier is full: nothing stored (``tier`` and ``limit`` say which)


@dataclass(frozen=True, slots=True)
class MemoryUpdate:
    """One entry of a response's ``memory_updates`` badge.

    ``id`` is the memory created, updated or duplicated (``None`` when nothing was stored); ``content`` is what is
    remembered now (for a duplicate, the existing memory's text; for ``dropped_limit``, what was not stored).
    ``tier`` and ``limit``: for ``dropped_limit``, the full tier and its limit (``None`` otherwise)."""

    id: str | None
    content: str
    category: Category
    action: UpdateAction
    tier: str | None = None
    limit: int | None = None

    @property
    def note(self) -> str:
        """What an interface says beside the content: empty, except for an update the limit stopped."""
        if self.action is not UpdateAction.DROPPED_LIMIT:
            return ""
        return f"not saved: the {self.tier} tier keeps at most {self.limit} memories"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "content": self.content,
            "category": self.category.value,
            "action": self.action.value,
        }
        if self.action is UpdateAction.DROPPED_LIMIT:
            out.update(tier=self.tier, limit=self.limit)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryUpdate:
        try:
            limit = data.get("limit")
            return cls(
                id=None if data.get("id") is None else str(data["id"]),
                content=str(data["content"]),
                category=Category.parse(str(data["category"])),
                action=UpdateAction(str(data["action"])),
                tier=None if data.get("tier") is None else str(data["tier"]),
                limit=None if limit is None else int(limit),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a memory update ({exc}); it must come from MemoryUpdate.to_dict()") from None


@dataclass(frozen=True, slots=True)
class AddResult:
    """What an explicit add did (``AsyncMemstack.add_result``; the HTTP API's ``action``): ``created`` a new memory,
    or found it already there (``duplicate``: ``memory`` is the existing one, nothing was stored and nothing counted
    against the tier limit). ``reason``: why it is a duplicate (the same text, or the dedup rule's explanation)."""

    memory: Memory
    action: UpdateAction
    reason: str = ""

    @property
    def duplicate(self) -> bool:
        return self.action is UpdateAction.DUPLICATE
