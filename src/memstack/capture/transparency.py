"""Transparency: which long-term memories a response used ("memstack used: your preference for bullet points").

The context manifest of each response (``memstack.types.Manifest``, kept by ``store.contexts``) lists every fragment
the model was shown; a layer-6 fragment's source is ``memory:<id>``. A memory counts as *used* when its fragment was
kept (not trimmed for the budget, not quarantined by the guard). The memories are looked up as they are now: a
memory forgotten since is still listed (inactive, restorable), one deleted permanently has ``memory = None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstack.errors import NotFound
from memstack.store.base import Store
from memstack.types import FragmentStatus, Layer, Manifest, Memory, UserRef

__all__ = ["UsedMemory", "memories_used", "used_memory_ids"]

_PREFIX = "memory:"
#: Excerpts of past conversations recalled into the memory layer (``memstack.recall.layers``) are not memories.
_EXCERPTS = "memory:turn:"


@dataclass(frozen=True, slots=True)
class UsedMemory:
    id: str
    memory: Memory | None  # None: deleted permanently since the response
    tokens: int  # what it cost in the context


def used_memory_ids(manifest: Manifest) -> tuple[str, ...]:
    """The ids of the memories the model was shown for this manifest, in context order."""
    return tuple(
        entry.source.removeprefix(_PREFIX)
        for entry in manifest.entries
        if entry.layer == Layer.MEMORY.label
        and entry.status is FragmentStatus.KEPT
        and entry.source.startswith(_PREFIX)
        and not entry.source.startswith(_EXCERPTS)
    )


async def memories_used(store: Store, user: UserRef, context_id: str) -> list[UsedMemory]:
    """The memories response ``context_id`` of ``user`` used (``NotFound`` if that context is not the user's)."""
    manifest = await store.contexts.get(user.tenant, context_id, user_id=user.user_id)
    tokens = {e.source.removeprefix(_PREFIX): e.tokens for e in manifest.entries if e.source.startswith(_PREFIX)}
    out = []
    for memory_id in used_memory_ids(manifest):
        try:
            memory: Memory | None = await store.memories.get(user, memory_id)
        except NotFound:
            memory = None
        out.append(UsedMemory(memory_id, memory, tokens.get(memory_id, 0)))
    return out
