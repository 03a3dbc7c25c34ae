"""``MemstackStore``: LangGraph's ``BaseStore`` (long-term memory for graphs, agents and LangMem) kept in memstack.

An item is a memory. Its value's text field (``content`` unless told otherwise) becomes the memory's content, which
memstack embeds and searches by meaning; the value's other keys become the memory's metadata, beside the item's
namespace and key (:mod:`._layout`), so a search's ``filter`` is a memstack metadata filter. A value with no text
field is stored with its JSON as content, so it is still found by meaning, and reads back as it was.

The four operations, in the order a batch gives them (a read after a write in one batch sees the write):

- ``GetOp``: the newest memory with the item's exact namespace and key (a ``list`` with a metadata filter).
- ``PutOp``: an item already there is edited in place (its id and ``created_at`` kept, the change in its history);
  a new one is added with ``force`` (two items with the same text are two items, not memstack's duplicate). A value
  of ``None`` deletes it for good (``delete``). Two puts of a new key racing in two processes can both add; the
  next put of that key keeps the newest and deletes the rest.
- ``SearchOp``: with ``query``, memstack's semantic ``search`` (best first, ``SearchItem.score`` the cosine
  similarity, ``min_score`` of the store leaves out the weak ones); without, ``list``, newest first. The namespace
  prefix and the filter's plain values go to memstack as a metadata filter; operators (``$gt``, ``$ne`` …), nested
  values and the text field are checked here, on pages read until the page is full.
- ``ListNamespacesOp``: the namespaces of the items, read from their metadata, a user at a time.

A search or listing whose prefix stops before the user (``()``, or a tenant alone) goes through every user of the
tenant (``users.list``), so it costs a call per user: graphs normally search under their own user.

memstack's calls are async and belong to the event loop that opened the engine (or the client). ``abatch`` runs
them there, awaiting directly on that loop and through ``run_coroutine_threadsafe`` from any other; the blocking
``batch`` (LangGraph's sync nodes, ``graph.invoke``) does the same from another thread and refuses to block the
loop's own thread, as LangGraph's async PostgreSQL store does. TTLs are not supported (``supports_ttl`` is false)
and ``index=False`` changes nothing: every memory is embedded.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import math
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memstack import AsyncMemstack, Memory
from memstack.adapters.langgraph._layout import (
    KEY,
    PREFIX,
    TEXT,
    Layout,
    Owner,
    exact,
    namespace_of,
    prefix_filter,
)
from memstack.client import AsyncMemstackClient
from memstack.errors import InputError

__all__ = ["MemstackStore"]

PAGE = 100
_SCALARS = (str, int, float, bool, type(None))


class MemstackStore(BaseStore):
    """LangGraph's store kept in memstack: ``MemstackStore(ms)`` with an open ``AsyncMemstack`` (embedded) or
    ``AsyncMemstackClient`` (a server). ``namespace``: how namespaces map to memstack's users (:mod:`._layout`);
    ``tenant``: the tenant when the layout names none; ``text_field``: the value's key that holds the memory's
    text; ``min_score``: searches with a query leave out results below it."""

    supports_ttl = False

    def __init__(
        self,
        memstack: AsyncMemstack | AsyncMemstackClient,
        *,
        namespace: Sequence[str] = ("{user_id}",),
        tenant: str | None = None,
        text_field: str = "content",
        min_score: float | None = None,
    ) -> None:
        if text_field.startswith(PREFIX):
            raise InputError(f"text_field {text_field!r} starts with {PREFIX!r}, which the store keeps for itself")
        self.memstack = memstack
        self.layout = Layout(tuple(namespace), tenant)
        self.text_field = text_field
        self.min_score = min_score
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    # -- BaseStore ---------------------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> builtins.list[Result]:
        """The blocking form of :meth:`abatch`, for a thread other than the event loop's."""
        loop = self._loop
        if loop is None or loop.is_closed():
            raise RuntimeError(
                "MemstackStore has not seen the event loop its memstack runs on: create it inside that loop (or "
                "await one of its async methods first), then call the blocking methods from another thread"
            )
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise RuntimeError(
                "MemstackStore's blocking methods would block the event loop memstack runs on; use the async "
                "ones (aget, aput, asearch, abatch) there, or run the blocking code in a thread"
            )
        return asyncio.run_coroutine_threadsafe(self._run(list(ops)), loop).result()

    async def abatch(self, ops: Iterable[Op]) -> builtins.list[Result]:
        running = asyncio.get_running_loop()
        if self._loop is None or self._loop.is_closed():
            self._loop = running
        if running is self._loop:
            return await self._run(list(ops))
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._run(list(ops)), self._loop))

    async def _run(self, ops: builtins.list[Op]) -> builtins.list[Result]:
        results: builtins.list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(await self._list_namespaces(op))
            else:
                raise InputError(f"MemstackStore does not know the operation {type(op).__name__}")
        return results

    # -- the operations ----------------------------------------------------------------------------------------

    async def _find(self, owner: Owner, namespace: tuple[str, ...], key: str) -> builtins.list[Memory]:
        return await self.memstack.list(
            owner.user_id, metadata=exact(namespace, key), limit=PAGE, tenant=owner.tenant
        )  # newest first

    async def _get(self, op: GetOp) -> Item | None:
        owner = self.layout.owner(op.namespace)
        found = await self._find(owner, op.namespace, op.key)
        return self._item(found[0], op.namespace, op.key) if found else None

    async def _put(self, op: PutOp) -> None:
        owner = self.layout.owner(op.namespace)
        found = await self._find(owner, op.namespace, op.key)
        if op.value is None:
            for memory in found:
                await self.memstack.delete(owner.user_id, memory.id, tenant=owner.tenant)
            return
        content, metadata = self._to_memory(op.namespace, op.key, op.value)
        if not found:
            await self.memstack.add(
                owner.user_id, content, agent_id=owner.agent_id, force=True, metadata=metadata, tenant=owner.tenant
            )
            return
        newest, *stale = found
        await self.memstack.edit(owner.user_id, newest.id, content=content, metadata=metadata, tenant=owner.tenant)
        for memory in stale:  # a racing put of the same new key added a second memory: the newest wins
            await self.memstack.delete(owner.user_id, memory.id, tenant=owner.tenant)

    async def _search(self, op: SearchOp) -> builtins.list[SearchItem]:
        if not self.layout.fits(op.namespace_prefix):
            return []
        pushed, rest = self._split_filter(op.filter)
        pushed.update(prefix_filter(op.namespace_prefix))
        want = op.offset + op.limit
        hits: builtins.list[SearchItem] = []
        async for user_id, tenant in self._users(op.namespace_prefix):
            if op.query:
                hits += await self._semantic(user_id, tenant, op.query, pushed, rest, want)
            else:
                hits += await self._newest(user_id, tenant, pushed, rest, want)
        if op.query:
            hits.sort(key=lambda hit: -(hit.score or 0.0))
        else:
            hits.sort(key=lambda hit: hit.updated_at, reverse=True)
        return hits[op.offset : want]

    async def _semantic(
        self, user_id: str, tenant: str | None, query: str, pushed: dict[str, Any], rest: dict[str, Any], want: int
    ) -> builtins.list[SearchItem]:
        """The ``want`` best matches of one user: memstack's search, asked for more while the filter's remainder
        leaves the page short and memstack had more to give."""
        asked = want if not rest else max(want * 4, PAGE)
        while True:
            scored = await self.memstack.search(
                user_id, query, limit=asked, metadata=pushed or None, min_score=self.min_score, tenant=tenant
            )
            hits = [
                item
                for hit in scored
                if (item := self._search_item(hit.memory, hit.score)) is not None and _matches(item.value, rest)
            ]
            if len(hits) >= want or len(scored) < asked:
                return hits[:want]
            asked *= 4

    async def _newest(
        self, user_id: str, tenant: str | None, pushed: dict[str, Any], rest: dict[str, Any], want: int
    ) -> builtins.list[SearchItem]:
        hits: builtins.list[SearchItem] = []
        offset = 0
        while len(hits) < want:
            page = await self.memstack.list(user_id, metadata=pushed or None, limit=PAGE, offset=offset, tenant=tenant)
            hits += [
                item
                for memory in page
                if (item := self._search_item(memory, None)) is not None and _matches(item.value, rest)
            ]
            if len(page) < PAGE:
                break
            offset += PAGE
        return hits[:want]

    async def _list_namespaces(self, op: ListNamespacesOp) -> builtins.list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefix: tuple[str, ...] = ()
        for condition in conditions:  # the longest wildcard-free prefix narrows which users and memories to read
            if condition.match_type == "prefix":
                fixed = tuple(label for label in _until_wildcard(condition.path))
                prefix = fixed if len(fixed) > len(prefix) else prefix
        if not self.layout.fits(prefix):
            return []
        found: set[tuple[str, ...]] = set()
        async for user_id, tenant in self._users(prefix):
            offset = 0
            while True:
                page = await self.memstack.list(
                    user_id, metadata=prefix_filter(prefix) or None, limit=PAGE, offset=offset, tenant=tenant
                )
                for memory in page:
                    namespace = namespace_of(memory.metadata)
                    if namespace is not None and all(_matches_condition(c, namespace) for c in conditions):
                        found.add(namespace if op.max_depth is None else namespace[: op.max_depth])
                if len(page) < PAGE:
                    break
                offset += PAGE
        return sorted(found)[op.offset : op.offset + op.limit]

    async def _users(self, prefix: tuple[str, ...]) -> AsyncIterator[tuple[str, str | None]]:
        """The users whose memories a prefix can reach: the one it names, or every user of its tenant."""
        user_id, tenant = self.layout.scope(prefix)
        if user_id is not None:
            yield user_id, tenant
            return
        after: str | None = None
        while True:
            page = await self.memstack.users.list(after=after, limit=PAGE, tenant=tenant)
            for user in page:
                yield user.user_id, tenant
            if len(page) < PAGE:
                return
            after = page[-1].user_id

    # -- values and memories -----------------------------------------------------------------------------------

    def _to_memory(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The memory's content and metadata for an item."""
        if not isinstance(value, Mapping):
            raise InputError(f"a store value is a dict (JSON object), got {type(value).__name__}")
        if reserved := [k for k in value if isinstance(k, str) and k.startswith(PREFIX)]:
            raise InputError(f"value key {reserved[0]!r} starts with {PREFIX!r}, which the store keeps for itself")
        text = value.get(self.text_field)
        if isinstance(text, str) and text.strip():
            rest = {k: v for k, v in value.items() if k != self.text_field}
            return text, {**rest, **exact(namespace, key), TEXT: self.text_field}
        content = json.dumps(dict(value), ensure_ascii=False, sort_keys=True, default=str)  # found by meaning still
        return content, {**value, **exact(namespace, key), TEXT: None}

    def _value(self, memory: Memory) -> dict[str, Any]:
        value = {k: v for k, v in memory.metadata.items() if not k.startswith(PREFIX)}
        source = memory.metadata.get(TEXT)
        if isinstance(source, str):
            value[source] = memory.content
        return value

    def _item(self, memory: Memory, namespace: tuple[str, ...], key: str) -> Item:
        return Item(
            value=self._value(memory),
            key=key,
            namespace=namespace,
            created_at=memory.created_at,
            updated_at=memory.updated_at,
        )

    def _search_item(self, memory: Memory, score: float | None) -> SearchItem | None:
        namespace = namespace_of(memory.metadata)
        key = memory.metadata.get(KEY)
        if namespace is None or not isinstance(key, str):
            return None  # a memory of the user no LangGraph store wrote
        return SearchItem(namespace, key, self._value(memory), memory.created_at, memory.updated_at, score)

    def _split_filter(self, flt: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """A search filter as the part memstack's metadata filter does (exact scalar values of metadata keys) and
        the rest, checked here."""
        pushed: dict[str, Any] = {}
        rest: dict[str, Any] = {}
        for key, wanted in (flt or {}).items():
            if key.startswith(PREFIX):
                raise InputError(f"filter key {key!r} starts with {PREFIX!r}, which the store keeps for itself")
            _check_operators(wanted)
            plain = wanted["$eq"] if isinstance(wanted, Mapping) and set(wanted) == {"$eq"} else wanted
            if key != self.text_field and isinstance(plain, _SCALARS) and not _non_finite(plain):
                pushed[key] = plain
            else:
                rest[key] = wanted
        return pushed, rest


def _non_finite(value: object) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(key), wanted) for key, wanted in flt.items())


def _compare(actual: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (as its in-memory and PostgreSQL stores read them): a dict of ``$`` operators,
    a nested dict compared key by key, a list item by item, anything else by equality."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            return all(_operator(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if not _number(actual) or not _number(operand):
        return False  # a missing or non-numeric value is neither above nor below anything
    a, b = float(actual), float(operand)
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _check_operators(wanted: Any) -> None:
    """An unknown operator is an error before any search, not only when a memory reaches it."""
    if isinstance(wanted, Mapping):
        for op, operand in wanted.items():
            if str(op).startswith("$") and op not in OPERATORS:
                raise InputError(f"unknown filter operator {op!r}; use {', '.join(OPERATORS)}")
            _check_operators(operand)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _until_wildcard(path: Iterable[str]) -> Iterable[str]:
    for label in path:
        if label == "*":
            return
        yield label


def _matches_condition(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(want in ("*", label) for label, want in pairs)
