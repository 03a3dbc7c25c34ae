"""mem0's memories (what its ``get_all`` returns, or a file of them) as the memory records of a memstack export
document, one list per user, so they are imported by the same transaction as memstack's own
(``AsyncMemstack.users.import_mem0``).

Read: ``{"results": [...]}`` (``get_all`` of mem0 v1.1 and later, and its platform), ``{"memories": [...]}``, or a
bare list; each item ``{"id", "memory", "user_id", "created_at", "updated_at", "metadata", "hash", ...}``. A memory
keeps mem0's id (so importing the same file twice adds nothing, and a memory can be found by the id mem0 gave it),
its text, its agent and its times: ``created_at`` (its history's creation is dated then) and ``updated_at``
(the same when mem0 has none). A time without a time zone is taken as UTC. mem0's own fields that memstack has no
column for (``hash``, ``categories``, ``run_id``, ``actor_id``, ``role``, ``immutable``, ``expiration_date``) are kept
in the memory's ``metadata`` under ``"mem0"``, beside mem0's metadata; mem0's categories are not memstack's, so every
memory is of category ``general``, source ``manual`` (added through the API), confidence 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memstack.errors import ImportRefused, InputError
from memstack.types import check_id, check_text
from memstack.types.memories import check_metadata

__all__ = ["MEM0_EXTRAS", "mem0_memories"]

#: mem0's fields kept under ``metadata["mem0"]``.
MEM0_EXTRAS = ("hash", "categories", "run_id", "actor_id", "role", "immutable", "expiration_date")


def _time(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ImportRefused(f"{where} is not an ISO 8601 time ({value!r}); nothing was imported")
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        raise ImportRefused(f"{where} is not an ISO 8601 time ({value!r}); nothing was imported") from None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).isoformat()


def _items(data: Any) -> list[Any]:
    if isinstance(data, Mapping):
        for key in ("results", "memories"):
            if isinstance(data.get(key), list):
                return list(data[key])
    if isinstance(data, list):
        return data
    raise ImportRefused(
        'this is not mem0\'s memories: expected {"results": [...]} (mem0\'s get_all), {"memories": [...]} or a list '
        "of memories; nothing was imported"
    )


def _record(item: Any, i: int) -> dict[str, Any]:
    where = f"memory {i + 1}"
    if not isinstance(item, Mapping):
        raise ImportRefused(f"{where} is not a JSON object; nothing was imported")
    try:
        memory_id = check_id(item.get("id"), f"{where}'s id")
        text = item.get("memory")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where} has no text ('memory')")
        content = check_text(text, f"{where}'s text ('memory')")
        metadata = dict(check_metadata(item.get("metadata"), f"{where}'s metadata"))
    except InputError as exc:
        raise ImportRefused(f"{exc}; nothing was imported") from None
    extras = {k: item[k] for k in MEM0_EXTRAS if item.get(k) is not None}
    if extras:
        metadata["mem0"] = extras
    created = _time(item.get("created_at"), f"{where}'s created_at")
    updated = _time(item["updated_at"], f"{where}'s updated_at") if item.get("updated_at") else created
    agent = item.get("agent_id")
    fields = {
        "content": content,
        "category": "general",
        "source": "manual",
        "confidence": 1.0,
        "is_active": True,
        "deleted_by": None,
        "observed_at": None,
        "expires_at": None,
        "merged_into": None,
        "source_turn_ids": [],
        "metadata": metadata,
    }
    history = {"action": "create", "before": None, "after": fields, "at": created, "actor": "import"}
    return {
        "id": memory_id,
        "agent_id": agent if isinstance(agent, str) and agent else None,
        **fields,
        "created_at": created,
        "updated_at": updated,
        "stored": True,
        "history": [{**history, "note": "imported from mem0"}],
        "hides": [],
    }


def mem0_memories(data: Any, *, user_id: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """mem0's memories in ``data`` (parsed JSON) as export memory records, by user id (the item's ``user_id``, else
    ``user_id``); ``ImportRefused`` naming the first memory that cannot be read."""
    users: dict[str, list[dict[str, Any]]] = {}
    for i, item in enumerate(_items(data)):
        record = _record(item, i)
        owner = item.get("user_id") or user_id
        if not isinstance(owner, str) or not owner:
            raise ImportRefused(
                f"memory {i + 1} names no user_id: pass the user the file belongs to (user_id=, --user); "
                "nothing was imported"
            )
        try:
            check_id(owner, "user_id")
        except InputError as exc:
            raise ImportRefused(f"memory {i + 1}: {exc}; nothing was imported") from None
        users.setdefault(owner, []).append(record)
    return users
