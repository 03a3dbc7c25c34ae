"""mem0's data shapes, from memstack's: the ids, the memory items, the history rows and the scope.

**Scope.** mem0 scopes a memory by ``user_id``, ``agent_id`` and ``run_id`` (at least one), stored in one global
vector store and filtered on its payload. memstack keeps every memory under one user. The owner (the memstack user)
is ``user_id`` when given, else ``agent:<agent_id>``, else ``run:<run_id>`` (:func:`owner`), and the scope given is
also written into the memory's metadata (:func:`scope_metadata`), so that a filter on any of the three is memstack's
exact-match metadata filter and a page of ``limit`` results is exact (memstack's own ``agent_id`` filter would add
the user's shared memories). The scope keys come back at the top of an item, as mem0 promotes them from its payload.

**Ids.** mem0's ``get(memory_id)``, ``update``, ``delete`` and ``history`` name no user; memstack's need one. Rather
than a per-process map from id to user (wrong in another process, lost on restart), an id handed out carries its
owner: ``<memstack id>.<owner, base64url>`` (:func:`compat_id`, :func:`parse_id`). memstack's ids have no ``.``.
An id that is not of this form names no memory (``get`` answers ``None``, as mem0 does for an unknown id).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from typing import Any

from memstack.errors import InputError
from memstack.types import HistoryAction, Memory, MemoryEvent

__all__ = [
    "SCOPE_KEYS",
    "compat_id",
    "history_row",
    "item",
    "metadata_filter",
    "owner",
    "parse_id",
    "scope",
    "scope_metadata",
]

#: The keys mem0 promotes from a memory's payload to the top of an item (``user_id``, ``agent_id``, ``run_id``: the
#: scope; ``actor_id`` and ``role``: who said it, for ``infer=False`` adds).
SCOPE_KEYS = ("user_id", "agent_id", "run_id")
_PROMOTED = (*SCOPE_KEYS, "actor_id", "role")

#: mem0's history events for memstack's actions (a forget or a merge takes the memory out of use: mem0 has no such
#: state, the nearest is DELETE; a restore puts it back, the nearest is ADD).
_EVENTS = {
    HistoryAction.CREATE: "ADD",
    HistoryAction.UPDATE: "UPDATE",
    HistoryAction.SUPERSEDE: "UPDATE",
    HistoryAction.FORGET: "DELETE",
    HistoryAction.RESTORE: "ADD",
    HistoryAction.MERGE: "DELETE",
    HistoryAction.DELETE: "DELETE",
}


def _scope_id(value: object, name: str) -> str | None:
    """mem0's rule for an entity id: ``None``, or a string (a number is turned into one) without whitespace."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or any(c.isspace() for c in text):
        raise InputError(f"{name} must be a non-empty id without whitespace, got {value!r}")
    return text


def scope(user_id: object, agent_id: object, run_id: object) -> dict[str, str]:
    """The scope given, checked; mem0 requires one of the three."""
    given = {k: v for k, v in zip(SCOPE_KEYS, (user_id, agent_id, run_id), strict=True) if v is not None}
    checked = {k: _scope_id(v, k) for k, v in given.items()}
    out = {k: v for k, v in checked.items() if v is not None}
    if not out:
        raise InputError("pass at least one of user_id, agent_id or run_id (as mem0 requires)")
    return out


def owner(scoped: Mapping[str, str]) -> str:
    """The memstack user holding memories of this scope (the module docstring says why)."""
    if "user_id" in scoped:
        return scoped["user_id"]
    if "agent_id" in scoped:
        return f"agent:{scoped['agent_id']}"
    return f"run:{scoped['run_id']}"


def scope_metadata(scoped: Mapping[str, str], metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a new memory's metadata holds: the caller's, without scope keys (mem0 drops them too: the scope is set
    by the parameters only), and the scope."""
    out = {k: v for k, v in (metadata or {}).items() if k not in (*_PROMOTED,)}
    out.update(scoped)
    return out


def metadata_filter(scoped: Mapping[str, str], filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """memstack's metadata filter for a mem0 scope and ``filters``: exact matches on top-level keys. mem0's
    ``{"key": {"eq": value}}`` is the same; its other operators (``ne``, ``in``, ``gt``, ``AND``…) have no memstack
    equivalent and are refused rather than ignored (ignoring one would return memories it excludes)."""
    out: dict[str, Any] = {}
    for key, value in (filters or {}).items():
        if key in SCOPE_KEYS:
            continue
        if isinstance(value, Mapping):
            if set(value) != {"eq"}:
                raise InputError(
                    f"filter {key!r}: memstack filters metadata by exact value only ({{'{key}': value}} or "
                    f"{{'eq': value}}); {sorted(value)} has no equivalent"
                )
            value = value["eq"]
        if key in ("AND", "OR", "NOT"):
            raise InputError(f"filter {key!r}: memstack filters metadata by exact value only; combine in your code")
        out[key] = value
    out.update(scoped)
    return out


def compat_id(memstack_id: str, user_id: str) -> str:
    encoded = base64.urlsafe_b64encode(user_id.encode()).decode().rstrip("=")
    return f"{memstack_id}.{encoded}"


def parse_id(memory_id: object) -> tuple[str, str] | None:
    """``(owner, memstack id)`` of an id from :func:`compat_id`, ``None`` for any other value."""
    if not isinstance(memory_id, str) or "." not in memory_id:
        return None
    memstack_id, encoded = memory_id.split(".", 1)
    try:
        user = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not memstack_id or not user or compat_id(memstack_id, user) != memory_id:
        return None
    return user, memstack_id


def _hash(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()  # mem0's ``hash``: the md5 of the text


def item(memory: Memory, score: float | None = None) -> dict[str, Any]:
    """A memory as mem0's ``MemoryItem`` dict: ``id``, ``memory``, ``hash``, ``metadata`` (``None`` when empty),
    ``score`` (search only: ``get_all`` leaves it out, as mem0 does), the times as ISO strings, then the scope and
    ``role`` / ``actor_id`` where the memory has them."""
    meta = dict(memory.metadata)
    out: dict[str, Any] = {
        "id": compat_id(memory.id, memory.user_id),
        "memory": memory.content,
        "hash": _hash(memory.content),
        "metadata": None,
        "score": score,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
    }
    for key in _PROMOTED:
        if key in meta:
            out[key] = meta.pop(key)
    if meta:
        out["metadata"] = meta
    return out


def history_row(event: MemoryEvent, owner_id: str, created_at: str | None) -> dict[str, Any]:
    """One history event as a row of mem0's history table: ``old_memory`` / ``new_memory`` are the text before and
    after, ``created_at`` the memory's creation, ``updated_at`` the event's time."""
    before, after = event.before or {}, event.after or {}
    meta = after.get("metadata") or before.get("metadata") or {}
    return {
        "id": str(event.id),
        "memory_id": compat_id(event.memory_id, owner_id),
        "old_memory": before.get("content"),
        "new_memory": after.get("content") if event.action is not HistoryAction.DELETE else None,
        "event": _EVENTS.get(event.action, "UPDATE"),
        "created_at": created_at or event.at.isoformat(),
        "updated_at": event.at.isoformat(),
        "is_deleted": event.action is HistoryAction.DELETE,
        "actor_id": meta.get("actor_id"),
        "role": meta.get("role"),
    }
