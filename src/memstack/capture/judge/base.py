"""The update judge's contract: a batch of candidates, each with the user's nearest memories, in; one verdict each out.

A verdict says what one candidate does to the memories it was compared with:

* ``add``: news beside them (the dedup rule still decides duplicate / new);
* ``update``: the same fact as ``memory_id`` with more or corrected detail: the memory is rewritten in place;
* ``supersede``: ``memory_id`` is no longer true because of the news (moved, quit, ended, rescheduled, a changed
  preference or number): the memory is replaced in place, its old text kept in the history;
* ``none``: ``memory_id`` already says it; nothing is stored.

Judges never raise for content they cannot read: a model that fails is answered by its fallback, and the verdict's
``judge`` and ``reason`` say who decided and why (they become the memory's history note).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from memstack.types import Candidate, ScoredMemory

__all__ = ["UPDATE_NEIGHBOURS", "JudgeItem", "UpdateJudge", "UpdateKind", "UpdateVerdict"]

#: Memories a candidate is compared with (the writer's one nearest-neighbour call, best first).
UPDATE_NEIGHBOURS = 8


class UpdateKind(StrEnum):
    ADD = "add"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    NONE = "none"

    @property
    def names_memory(self) -> bool:
        return self is not UpdateKind.ADD


@dataclass(frozen=True, slots=True)
class UpdateVerdict:
    kind: UpdateKind
    memory_id: str | None = None
    reason: str = ""
    judge: str = "offline"  # who decided, for the history note

    @classmethod
    def add(cls, reason: str = "", judge: str = "offline") -> UpdateVerdict:
        return cls(UpdateKind.ADD, None, reason, judge)

    @property
    def replaces(self) -> bool:
        """The candidate takes the place of ``memory_id`` (an update or a supersede)."""
        return self.kind in (UpdateKind.UPDATE, UpdateKind.SUPERSEDE) and self.memory_id is not None


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One candidate and the user's memories nearest to it (best first, with their cosine)."""

    candidate: Candidate
    nearest: tuple[ScoredMemory, ...]


@runtime_checkable
class UpdateJudge(Protocol):
    @property
    def name(self) -> str:
        """Who decides, e.g. ``offline`` or ``llm:openai:gpt-4o-mini``: recorded in each verdict."""
        ...

    async def judge(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        """One verdict per item, in order (one model call for the whole batch where a model decides)."""
        ...

    async def aclose(self) -> None: ...
