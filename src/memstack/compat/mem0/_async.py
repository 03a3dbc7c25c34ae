"""``AsyncMemory`` / ``AsyncMemoryClient``: mem0's methods on memstack (embedded, or a server through the client).

One class over either backend: :class:`~memstack.engine.AsyncMemstack` and
:class:`~memstack.client.AsyncMemstackClient` have the same methods, so the mapping is written once. The blocking
``Memory`` / ``MemoryClient`` run these coroutines on a private loop thread (:mod:`memstack.compat.mem0`).

What each call does:

- ``add(..., infer=False)``: each non-system message stored as it is (``force``: mem0 stores duplicates too), with
  ``role`` (and ``actor_id`` from a message's ``name``) in its metadata.
- ``add(..., infer=True)``: the conversation imported with memstack's capture (``ingest``: no chat model; in a
  session named after ``run_id``, else a new one closed at the end), then the scope and metadata written onto each
  memory it created or updated. Its results are the memories captured (``ADD``) or superseded (``UPDATE``); what
  was already held is left out, as mem0 leaves out its ``NONE`` events.
- ``search`` / ``get_all``: memstack's search and list over the owner's memories, filtered on the scope.
- ``update``: memstack's ``edit``; mem0 merges new metadata into the old, so the merge is done here (memstack
  replaces the whole object).
- ``delete`` / ``delete_all``: permanent deletes (mem0 has no soft delete); the history stays, as in mem0.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Self

from memstack.client import AsyncMemstackClient
from memstack.engine import AsyncMemstack
from memstack.errors import InputError, NotFound
from memstack.types import Memory, UpdateAction

from ._shapes import history_row, item, metadata_filter, owner, parse_id, scope, scope_metadata

__all__ = ["AsyncMemory", "AsyncMemoryClient", "Backend", "settings_of"]

Backend = AsyncMemstack | AsyncMemstackClient

#: memstack's ``list`` returns at most this many a call: ``delete_all`` pages through with it.
_PAGE = 100


def _messages(messages: object) -> builtins.list[dict[str, Any]]:
    """mem0's accepted inputs: a string (one user message), one message dict, or a list of them."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        return [dict(messages)]
    if isinstance(messages, Sequence):
        out = []
        for m in messages:
            if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) or m.get("content") is None:
                raise InputError(f"each message must be {{'role': ..., 'content': ...}}, got {m!r}")
            out.append(dict(m))
        return out
    raise InputError(f"messages must be a string, a message dict or a list of them, got {type(messages).__name__}")


def _scope_of(user_id: object, agent_id: object, run_id: object, filters: Mapping[str, Any] | None) -> dict[str, str]:
    """The scope of a read: the parameters (mem0 1.x) or the same keys in ``filters`` (mem0 2.x), both accepted."""
    given = dict(filters or {})
    return scope(
        user_id if user_id is not None else given.get("user_id"),
        agent_id if agent_id is not None else given.get("agent_id"),
        run_id if run_id is not None else given.get("run_id"),
    )


class AsyncMemory:
    """mem0's ``AsyncMemory`` on memstack. ``AsyncMemory(home=..., embedder=...)`` opens an embedded engine with
    those settings (:class:`~memstack.config.Config`); ``AsyncMemory(engine=ms)`` uses one already open, which it
    then does not close. ``async with`` or :meth:`aclose` closes what it opened."""

    def __init__(self, *, engine: Backend | None = None, tenant: str | None = None, **settings: Any) -> None:
        if engine is not None and settings:
            raise InputError("pass either an engine or settings for a new one, not both")
        self._owned = engine is None
        self._engine: Backend = engine if engine is not None else AsyncMemstack(**settings)
        self._tenant = tenant

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Self:
        """mem0's constructor by configuration. memstack is configured by its own settings (``home``,
        ``embedder``, ``backend``…: :class:`~memstack.config.Config`); mem0's provider sections (``llm``,
        ``vector_store``, ``embedder`` as a provider dict, ``history_db_path``…) describe services memstack does not
        use, so they are refused with what to pass instead, never silently ignored."""
        return cls(**settings_of(config_dict))

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        if isinstance(self._engine, AsyncMemstack) and not self._engine.is_open:
            await self._engine.open()

    async def aclose(self) -> None:
        if self._owned:
            await self._engine.aclose()

    # -- writes ------------------------------------------------------------------------------------------------------

    async def add(
        self, messages: object, *, user_id: str | None = None, agent_id: str | None = None,
        run_id: str | None = None, metadata: Mapping[str, Any] | None = None, infer: bool = True,
    ) -> dict[str, Any]:  # fmt: skip
        """mem0's ``add``: ``{"results": [{"id", "memory", "event", ...}]}`` (the module docstring says how)."""
        scoped = scope(user_id, agent_id, run_id)
        msgs = [m for m in _messages(messages) if m["role"] != "system"]
        base = scope_metadata(scoped, metadata)
        who = owner(scoped)
        if not infer:
            results = []
            for m in msgs:
                meta = {**base, "role": m["role"]}
                if m.get("name"):
                    meta["actor_id"] = str(m["name"])
                added = await self._engine.add_result(
                    who, str(m["content"]), agent_id=scoped.get("agent_id"), metadata=meta, force=True,
                    tenant=self._tenant,
                )  # fmt: skip
                row = {"id": item(added.memory)["id"], "memory": added.memory.content, "event": "ADD"}
                results.append({**row, "actor_id": meta.get("actor_id"), "role": m["role"]})
            return {"results": results}
        session = scoped.get("run_id") or f"mem0-{uuid.uuid4().hex}"
        imported = await self._engine.ingest(
            who, session, [{"role": m["role"], "content": str(m["content"])} for m in msgs],
            end="run_id" not in scoped, tenant=self._tenant,
        )  # fmt: skip
        results = []
        for update in imported.memory_updates:
            if update.id is None or update.action not in (UpdateAction.CREATED, UpdateAction.UPDATED):
                continue
            current = await self._engine.get(who, update.id, tenant=self._tenant)
            edited = await self._engine.edit(who, update.id, metadata={**current.metadata, **base}, tenant=self._tenant)
            event = "ADD" if update.action is UpdateAction.CREATED else "UPDATE"
            results.append({"id": item(edited)["id"], "memory": edited.content, "event": event})
        return {"results": results}

    async def update(
        self, memory_id: str, text: str | None = None, metadata: Mapping[str, Any] | None = None, *,
        data: str | None = None,
    ) -> dict[str, str]:  # fmt: skip
        """mem0's ``update``: new text (``data``: mem0's older name for it) and/or metadata merged into the old."""
        text = text if text is not None else data
        if text is None and metadata is None:
            raise InputError("nothing to change: pass new text or metadata")
        who, mid = self._ids(memory_id)
        merged = None
        if metadata is not None:
            current = await self._engine.get(who, mid, tenant=self._tenant)
            keep = {k: v for k, v in current.metadata.items() if k in ("user_id", "agent_id", "run_id")}
            merged = {**current.metadata, **scope_metadata({}, metadata), **keep}
        await self._engine.edit(who, mid, content=text, metadata=merged, tenant=self._tenant)
        return {"message": "Memory updated successfully!"}

    async def delete(self, memory_id: str) -> dict[str, str]:
        who, mid = self._ids(memory_id)
        await self._engine.delete(who, mid, tenant=self._tenant)
        return {"message": "Memory deleted successfully!"}

    async def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Every memory of the scope, permanently (in pages of memstack's ``list``)."""
        scoped = scope(user_id, agent_id, run_id)
        who, flt = owner(scoped), metadata_filter(scoped, None)
        while page := await self._engine.list(who, limit=_PAGE, metadata=flt, tenant=self._tenant):
            for memory in page:
                await self._engine.delete(who, memory.id, tenant=self._tenant)
        return {"message": "Memories deleted successfully!"}

    # -- reads -------------------------------------------------------------------------------------------------------

    async def get(self, memory_id: str) -> dict[str, Any] | None:
        """mem0's ``get``: the memory's item, or ``None`` for an id it does not know (or a memory no longer in use:
        deleted, or forgotten through memstack)."""
        parsed = parse_id(memory_id)
        if parsed is None:
            return None
        try:
            memory = await self._engine.get(*parsed, tenant=self._tenant)
        except NotFound:
            return None
        return item(memory) if memory.is_active else None

    async def get_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
        filters: Mapping[str, Any] | None = None, limit: int | None = None, top_k: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """mem0's ``get_all``: newest first, at most ``limit`` (or mem0 2's ``top_k``; 20 by default)."""
        scoped = _scope_of(user_id, agent_id, run_id, filters)
        n = _count(limit, top_k)
        if n == 0:
            return {"results": []}
        memories: builtins.list[Memory] = []
        who, flt = owner(scoped), metadata_filter(scoped, filters)
        while len(memories) < n:
            want = min(_PAGE, n - len(memories))
            page = await self._engine.list(who, limit=want, offset=len(memories), metadata=flt, tenant=self._tenant)
            memories += page
            if len(page) < want:
                break
        return {"results": [{k: v for k, v in item(m).items() if k != "score"} for m in memories]}

    async def search(
        self, query: str, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
        limit: int | None = None, top_k: int | None = None, filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """mem0's ``search``: the closest memories, best first, ``score`` memstack's cosine similarity; those below
        ``threshold`` left out."""
        scoped = _scope_of(user_id, agent_id, run_id, filters)
        n = _count(limit, top_k)
        if threshold is not None and not 0 <= threshold <= 1:
            raise InputError(f"threshold must be between 0 and 1, got {threshold!r}")
        if n == 0:
            return {"results": []}
        hits = await self._engine.search(
            owner(scoped), query, limit=n, metadata=metadata_filter(scoped, filters), min_score=threshold,
            tenant=self._tenant,
        )  # fmt: skip
        return {"results": [item(hit.memory, hit.score) for hit in hits]}

    async def history(self, memory_id: str) -> builtins.list[dict[str, Any]]:
        """mem0's ``history``: the memory's changes, oldest first (also after a delete); ``[]`` for an unknown id."""
        parsed = parse_id(memory_id)
        if parsed is None:
            return []
        try:
            events = await self._engine.history(*parsed, tenant=self._tenant)
        except NotFound:
            return []
        created = events[0].at.isoformat() if events else None
        return [history_row(e, parsed[0], created) for e in events]

    async def reset(self) -> None:
        """mem0's ``reset`` empties the whole store. memstack erases a user at a time (``erase``) and has no
        store-wide wipe through its API, so this refuses, saying what to do instead."""
        raise InputError("reset() would empty the whole store; use delete_all(user_id=...) for each user")

    def _ids(self, memory_id: str) -> tuple[str, str]:
        parsed = parse_id(memory_id)
        if parsed is None:
            raise NotFound("memory", str(memory_id))
        return parsed


class AsyncMemoryClient(AsyncMemory):
    """mem0's ``AsyncMemoryClient`` on a memstack server: ``AsyncMemoryClient(host="http://127.0.0.1:8700",
    api_key="msk_...")`` (mem0's ``host`` is memstack's ``base_url``; without them the client reads
    ``MEMSTACK_URL`` / ``MEMSTACK_API_KEY``)."""

    def __init__(
        self, api_key: str | None = None, host: str | None = None, *, tenant: str | None = None,
        timeout: float = 120.0,
    ) -> None:  # fmt: skip
        super().__init__(engine=AsyncMemstackClient(host, api_key=api_key, timeout=timeout), tenant=tenant)
        self._owned = True


_MEM0_SECTIONS = frozenset({"llm", "vector_store", "graph_store", "history_db_path", "version", "reranker"})


def settings_of(config_dict: Mapping[str, Any]) -> dict[str, Any]:
    """memstack's settings from a ``from_config`` dict, refusing mem0's provider sections."""
    mem0_only = [k for k, v in config_dict.items() if isinstance(v, Mapping) or k in _MEM0_SECTIONS]
    if mem0_only:
        raise InputError(
            f"mem0 configuration {sorted(mem0_only)} has no meaning for memstack; pass memstack settings "
            "instead, e.g. {'home': 'data', 'embedder': 'local:minilm'} (see memstack.Config)"
        )
    return dict(config_dict)


def _count(limit: int | None, top_k: int | None) -> int:
    n = limit if limit is not None else top_k if top_k is not None else 20
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InputError(f"limit must be a whole number of at least 0, got {n!r}")
    return n
