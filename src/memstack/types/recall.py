"""Recall: long-term memories and archived messages ranked together (:mod:`memstack.recall`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memstack.types._core import Vector
from memstack.types.memories import Category, MemoryUpdate
from memstack.types.sessions import SessionSummary

__all__ = [
    "MESSAGE_ROLES",
    "ArchiveMatch",
    "ArchivedMessage",
    "IngestResult",
    "RecallItem",
    "RecallKind",
    "TurnVectors",
]


class RecallKind(StrEnum):
    """What a recalled item is: a long-term memory, or one message of an archived exchange."""

    MEMORY = "memory"
    TURN = "turn"


#: The two messages of an archived exchange, in the order they were said.
MESSAGE_ROLES = ("user", "assistant")


@dataclass(frozen=True, slots=True)
class TurnVectors:
    """The vectors of one archived exchange's two messages, written once it is archived (``None`` for a blank
    message), with the names of who said them when the conversation was imported with speaker names."""

    session_id: str
    turn: int
    user: Vector | None
    assistant: Vector | None
    user_speaker: str | None = None
    assistant_speaker: str | None = None


@dataclass(frozen=True, slots=True)
class ArchivedMessage:
    """One message of an archived exchange with its vector, as recall's per-user index reads it.

    ``seq`` orders the store's vector writes: an index that has read up to ``seq`` asks only for what came after."""

    seq: int
    session_id: str
    turn: int
    role: str  # "user" | "assistant"
    text: str
    at: datetime
    speaker: str | None = None
    embedding: Vector | None = field(default=None, compare=False, repr=False)

    @property
    def turn_id(self) -> str:
        """The archived exchange it belongs to (``session_id:turn``)."""
        return f"{self.session_id}:{self.turn}"

    @property
    def id(self) -> str:
        """``session_id:turn:role``: names this message among a user's archive."""
        return f"{self.session_id}:{self.turn}:{self.role}"


@dataclass(frozen=True, slots=True)
class ArchiveMatch:
    """An archived message ranked for a query (``store.archive_vectors.search``), without its vector: its fused
    score (> 0) and the message before it in its conversation (what a prompt shows with it), if any."""

    message: ArchivedMessage
    score: float
    previous: ArchivedMessage | None = None


@dataclass(frozen=True, slots=True)
class RecallItem:
    """One result of ``AsyncMemstack.recall``, best first.

    ``kind`` memory: ``id`` is the memory's id, ``text`` its content, ``at`` when it was observed, ``category`` set.
    ``kind`` turn: one message of an archived exchange; ``id`` is ``session_id:turn:role``, ``text`` the message
    (``"Speaker: …"`` when imported with speaker names), ``context`` the message before it in that conversation and
    ``context_id`` that message's id (its role is the id's last part: the message before a user's message is not
    always the assistant's, as when no reply was kept).
    ``source_turn_ids``: the archived exchanges (``session_id:turn``) it comes from, for both kinds."""

    kind: RecallKind
    id: str
    text: str
    score: float
    at: datetime | None
    source_turn_ids: tuple[str, ...] = ()
    session_id: str | None = None
    role: str | None = None
    speaker: str | None = None
    category: Category | None = None
    context: str = ""
    context_id: str | None = None
    #: A memory's validity interval (:class:`~memstack.types.Memory`); ``None`` for a message, or unknown.
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    #: A memory's stored embedding when its search had it at hand (:class:`~memstack.types.ScoredMemory`); not
    #: part of the answer (``to_dict``), only passed along so that a turn's guard does not embed the text again.
    vector: Vector | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "id": self.id,
            "text": self.text,
            "score": round(self.score, 6),
            "at": self.at.isoformat() if self.at else None,
            "source_turn_ids": list(self.source_turn_ids),
            "session_id": self.session_id,
            "role": self.role,
            "speaker": self.speaker,
            "category": self.category.value if self.category else None,
            "context": self.context,
            "context_id": self.context_id,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
        }


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What ``AsyncMemstack.ingest`` imported: the archived exchanges (``session_id:turn``), for each message given
    the archived message it became (``session_id:turn:role``; consecutive messages of one side share one), what
    memory capture did, and the session's cross-session line when the import ended it."""

    session_id: str
    turns: tuple[str, ...]
    message_ids: tuple[str, ...]
    memory_updates: tuple[MemoryUpdate, ...] = ()
    summary: SessionSummary | None = None
