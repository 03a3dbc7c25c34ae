"""What both backends' ``MemoryStore`` roles share: the checks on a write and the memory it makes (before or inside
its transaction, never SQL). Each backend keeps its own statements in ``store/<backend>/_memories.py``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memstack.errors import InputError
from memstack.store._checks import check_agent, parse_category, parse_source, utc
from memstack.types import Category, DeletedBy, HistoryAction, Memory, MemoryPatch, NewMemory, UserRef, Vector, utcnow
from memstack.types.memories import check_metadata

__all__ = ["UPDATE_ACTIONS", "check_forget", "check_limit", "check_update", "new_memory", "patched"]

#: The history actions ``update`` records (the others have their own calls).
UPDATE_ACTIONS = (HistoryAction.UPDATE, HistoryAction.SUPERSEDE, HistoryAction.MERGE)


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise InputError(f"limit must be zero or more, got {limit}")


def new_memory(
    user: UserRef, memory: NewMemory, now: datetime, memory_id: str, embedding: Vector | None = None
) -> Memory:
    """The :class:`Memory` that adding ``memory`` for ``user`` stores, active and created ``now``."""
    check_agent(memory.agent_id)
    if not isinstance(memory.content, str):
        raise InputError(f"memory content must be text, got {type(memory.content).__name__}")
    return Memory(
        id=memory_id,
        user_id=user.user_id,
        tenant=user.tenant,
        agent_id=memory.agent_id,
        content=memory.content,
        category=parse_category(memory.category),
        source=parse_source(memory.source),
        confidence=float(memory.confidence),
        is_active=True,
        deleted_by=None,
        created_at=now,
        updated_at=now,
        observed_at=utc(memory.observed_at),
        expires_at=utc(memory.expires_at),
        merged_into=None,
        source_turn_ids=tuple(str(t) for t in memory.source_turn_ids),
        embedding=embedding,
        metadata=check_metadata(memory.metadata),
    )


def check_update(patch: MemoryPatch, action: HistoryAction) -> None:
    if action not in UPDATE_ACTIONS:
        allowed = ", ".join(a.value for a in UPDATE_ACTIONS)
        raise InputError(f"update records one of: {allowed}; use forget/restore/delete for {action!r}")
    if patch.confidence is not None and not 0.0 <= patch.confidence <= 1.0:
        raise InputError(f"confidence must be between 0 and 1, got {patch.confidence}")


def patched(
    before: Memory, patch: MemoryPatch, category: Category | None, vector: Vector | None, *, embedding: Vector | None
) -> Memory:
    """``before`` with ``patch`` applied (``category``: the patch's, parsed), updated now and holding ``embedding``;
    ``InputError`` when the patch changes the content without the new text's ``vector``."""
    if patch.content is not None and patch.content != before.content and vector is None:
        raise InputError("changing a memory's content needs its new embedding: embed the new text and pass it")
    return replace(
        before,
        content=patch.content if patch.content is not None else before.content,
        category=category if category is not None else before.category,
        confidence=patch.confidence if patch.confidence is not None else before.confidence,
        expires_at=utc(patch.expires_at) if patch.expires_at is not None else before.expires_at,
        observed_at=utc(patch.observed_at) if patch.observed_at is not None else before.observed_at,
        source_turn_ids=(
            tuple(str(t) for t in patch.source_turn_ids)
            if patch.source_turn_ids is not None
            else before.source_turn_ids
        ),
        metadata=check_metadata(patch.metadata) if patch.metadata is not None else before.metadata,
        updated_at=utcnow(),
        embedding=embedding,
    )


def check_forget(memory_id: str, by: DeletedBy, merged_into: str | None) -> DeletedBy:
    """Who forgets (``by`` as a :class:`DeletedBy`); a memory is never merged into itself."""
    try:
        who = DeletedBy(by)
    except ValueError:
        raise InputError(f"deleted_by must be 'ai' or 'user', got {by!r}") from None
    if merged_into == memory_id:
        raise InputError("a memory cannot be merged into itself; pass the id of the memory that absorbed it")
    return who
