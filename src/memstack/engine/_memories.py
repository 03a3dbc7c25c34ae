"""A user's long-term memories, managed by hand: the methods of :class:`~memstack.engine.AsyncMemstack` that add,
read, search, edit, forget (one, or all a query is about), restore, delete and consolidate them, and say how many
there are against the tier's limit.

They are a mixin, :class:`MemoryManagement`, that ``AsyncMemstack`` inherits, not a namespace like
``engine.sessions``: ``ms.add(…)`` and ``ms.search(…)`` are the library's first lines (the README's, mem0's), and
the public API (``tests/test_public_api.py``), the blocking wrapper and the HTTP client name them on the engine
itself. The class only moves them out of the engine's module. It holds nothing but its two helpers, built at first
use for the open store (the explicit adds' dedup, the forgetter); what it uses of the engine (the open store and
embedder, the configuration, the erasure fence, the turn's caches) is declared below for the type checker and
provided by ``AsyncMemstack``.

Writes run under the erasure fence (:mod:`memstack.store.fence`): one that reads before it writes (forget, delete,
consolidate) pins the user's epoch first, so an erasure meanwhile refuses it; a single write (add, edit, restore)
checks the epoch it finds.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memstack.engine._renamed import renamed
from memstack.engine._scope import user_ref as _user
from memstack.errors import InputError, LimitReached, NotFound
from memstack.observe import Account, accounting
from memstack.store.fence import Fence, fenced
from memstack.types import (
    AddResult,
    Category,
    DeletedBy,
    Forgetting,
    HiddenItem,
    HistoryAction,
    Memory,
    MemoryEvent,
    MemoryFilter,
    MemoryPatch,
    MemoryUsage,
    NewMemory,
    ScoredMemory,
    Source,
    UserRef,
    Vector,
    check_text,
    utcnow,
)
from memstack.types._core import check_limit, check_min_score
from memstack.types.memories import check_as_of

if TYPE_CHECKING:
    from memstack.capture.consolidate import MergeResult
    from memstack.capture.explicit import ExplicitAdds
    from memstack.capture.forget import Forgetter
    from memstack.capture.transparency import UsedMemory
    from memstack.config import Config
    from memstack.embed import Embedder
    from memstack.observe import Telemetry
    from memstack.store import Store
    from memstack.turn.turns import Turns

__all__ = ["Categories", "MemoryManagement"]

#: A category filter: one category (by name or value), several, or ``None`` for all.
Categories = str | Category | Iterable[str | Category] | None


def _categories(value: Categories) -> tuple[Category, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (Category.parse(value),)
    return tuple(Category.parse(c) for c in value)


class MemoryManagement:
    """Long-term memory management, the part of :class:`~memstack.engine.AsyncMemstack` that works on memories."""

    # Built at first use, and again for another store (_adds, _forgetter).
    _explicit: ExplicitAdds | None = None
    _forgetting: Forgetter | None = None

    # What the engine provides (AsyncMemstack's attributes and members), declared for the type checker.
    _turns: Turns | None
    _telemetry: Telemetry

    if TYPE_CHECKING:

        @property
        def store(self) -> Store: ...

        @property
        def embedder(self) -> Embedder: ...

        @property
        def config(self) -> Config: ...

        async def _pin(self, user: UserRef) -> Fence: ...

    async def _embed(self, text: str) -> Any:
        return (await self.embedder.embed([text]))[0]

    def _limit(self, tier: str | None) -> tuple[str, int | None]:
        tiers = self.config.tiers
        limit = tiers.limit_for(tier)  # InputError naming the configured tiers if unknown
        return tiers.name_for(tier), limit

    @renamed(user="user_id")
    async def add(
        self, user_id: str | UserRef, content: str, *, category: str | Category = Category.GENERAL,
        tier: str | None = None, source: str | Source = Source.MANUAL, agent_id: str | None = None,
        confidence: float = 1.0, force: bool = False, metadata: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None, valid_to: datetime | None = None, tenant: str | None = None,
    ) -> Memory:  # fmt: skip
        """Store one memory; with the user's ``tier`` (default tier if omitted), ``LimitReached`` when full. A
        memory the user already has (the same text, or a duplicate by the capture pipeline's calibrated rule) is
        returned as it is, not stored again (:meth:`add_result` says which happened); ``force`` stores it anyway.
        ``metadata``: a JSON object kept with the memory (at most 4,000 characters as JSON), returned with it and
        filterable in :meth:`list` and :meth:`search`; a memory counts as already held only with the same metadata.
        ``valid_from``/``valid_to``: when it held in the user's life (``None``: unknown; an end before the start is
        ``InputError``); one that ended already is stored as a past fact, found by ``as_of`` reads only."""
        added = await self.add_result(
            user_id, content, category=category, tier=tier, source=source, agent_id=agent_id, confidence=confidence,
            force=force, metadata=metadata, valid_from=valid_from, valid_to=valid_to, tenant=tenant,
        )  # fmt: skip
        return added.memory

    @renamed(user="user_id")
    async def add_result(
        self, user_id: str | UserRef, content: str, *, category: str | Category = Category.GENERAL,
        tier: str | None = None, source: str | Source = Source.MANUAL, agent_id: str | None = None,
        confidence: float = 1.0, force: bool = False, metadata: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None, valid_to: datetime | None = None, tenant: str | None = None,
    ) -> AddResult:  # fmt: skip
        """:meth:`add`, saying what it did: ``created``, or ``duplicate`` with the memory already held (nothing
        stored, nothing counted against the tier limit: a full tier answers ``duplicate`` for it, not
        ``LimitReached``). See :mod:`memstack.capture.explicit`."""
        ref = _user(user_id, tenant)
        try:
            src = Source(source)
        except ValueError:
            raise InputError(f"unknown source {source!r}; use one of: {', '.join(s.value for s in Source)}") from None
        new = NewMemory(
            content, Category.parse(category), src, confidence, agent_id, metadata=metadata or {},
            valid_from=valid_from, valid_to=valid_to,
        )  # fmt: skip
        tier_name, limit = self._limit(tier)
        try:
            with fenced(Fence(ref, None)):
                return await self._adds().add(ref, new, await self._embed(content), limit=limit, force=force)
        except LimitReached as full:
            raise LimitReached(tier_name, full.limit) from None

    def _adds(self) -> ExplicitAdds:
        from memstack.capture.dedup import DedupRule, params_for
        from memstack.capture.explicit import ExplicitAdds

        if self._explicit is None or self._explicit.store is not self.store:
            self._explicit = ExplicitAdds(self.store, DedupRule(params_for(self.embedder.name)))
        return self._explicit

    @renamed(user="user_id")
    async def get(self, user_id: str | UserRef, memory_id: str, *, tenant: str | None = None) -> Memory:
        return await self.store.memories.get(_user(user_id, tenant), memory_id)

    @renamed(user="user_id")
    async def list(
        self,
        user_id: str | UserRef,
        *,
        category: Categories = None,
        text: str | None = None,
        agent_id: str | None = None,
        include_deleted: bool = False,
        limit: int = 100,
        offset: int = 0,
        metadata: Mapping[str, Any] | None = None,
        as_of: datetime | None = None,
        tenant: str | None = None,
    ) -> builtins.list[Memory]:
        """Newest first; ``text`` keeps memories containing every word of it; ``metadata`` those whose metadata has
        each key given with the same value (``{"project": "apollo"}``: exact match on top-level keys, values
        strings, numbers, booleans or null). ``as_of``: what held at that time instead of what holds now
        (:class:`~memstack.types.MemoryFilter`; a time without a zone is taken as UTC)."""
        flt = MemoryFilter(_categories(category), text, agent_id, include_deleted, limit, offset, metadata, as_of)
        return await self.store.index.list(_user(user_id, tenant), flt)

    @renamed(user="user_id", k="limit")
    async def search(
        self,
        user_id: str | UserRef,
        query: str,
        *,
        limit: int = 5,
        category: Categories = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        min_score: float | None = None,
        as_of: datetime | None = None,
        tenant: str | None = None,
    ) -> builtins.list[ScoredMemory]:
        """The ``limit`` active memories closest in meaning to ``query``, best first. ``score`` is the cosine
        similarity of their embeddings, from -1 to 1 (:class:`~memstack.types.ScoredMemory` says what values mean);
        ``min_score`` leaves out those below it, so fewer than ``limit`` (or none) may come back. ``metadata``: as
        for :meth:`list`. ``as_of``: among what held at that time (superseded past versions included, memories not
        yet valid left out) instead of what holds now."""
        if not query.strip():
            raise InputError("search query is empty; pass the text to search for")
        check_text(query, "the search query")
        check_as_of(as_of)  # before the embedding is paid for
        return await self.nearest(
            user_id, await self._embed(query), limit=limit, category=category, agent_id=agent_id, metadata=metadata,
            min_score=min_score, as_of=as_of, tenant=tenant,
        )  # fmt: skip

    @renamed(user="user_id", k="limit")
    async def nearest(
        self, user_id: str | UserRef, embedding: Vector, *, limit: int = 5, category: Categories = None,
        agent_id: str | None = None, metadata: Mapping[str, Any] | None = None, min_score: float | None = None,
        as_of: datetime | None = None, tenant: str | None = None,
    ) -> builtins.list[ScoredMemory]:  # fmt: skip
        """:meth:`search` for a query already embedded by this engine's embedder (a server that keeps its queries'
        embeddings): the ``limit`` active memories closest to ``embedding``, best first (``as_of``: as for
        :meth:`search`)."""
        user = _user(user_id, tenant)
        check_limit(limit)
        floor = check_min_score(min_score, low=-1.0, high=1.0)
        flt = MemoryFilter(categories=_categories(category), agent_id=agent_id, metadata=metadata, as_of=as_of)
        hits = await self.store.search_index.nearest(user, embedding, limit, flt)
        return hits if floor is None else [hit for hit in hits if hit.score >= floor]

    async def supersede(
        self, user_id: str | UserRef, memory_id: str, content: str, *, at: datetime | None = None,
        category: str | Category | None = None, tenant: str | None = None,
    ) -> Memory:  # fmt: skip
        """News that replaces a current memory from ``at`` on (default now; a time without a zone is UTC), as the
        capture pipeline's update judge does (:mod:`memstack.capture.supersede`): the memory keeps its id and takes
        ``content`` (valid from ``at``), the old fact is kept as a past version valid until ``at`` (found by
        ``as_of`` reads of its time) and in the history. ``InputError`` for a memory that is not current or an
        ``at`` at or before the memory's own ``valid_from``."""
        from memstack.capture.supersede import supersede

        ref = _user(user_id, tenant)
        check_text(content, "memory content")
        when = check_as_of(at) or utcnow()
        old = await self.store.memories.get(ref, memory_id)
        if not old.is_active:
            raise InputError(f"memory {memory_id} is not current (forgotten or superseded); supersede a current one")
        if old.valid_from is not None and when <= old.valid_from:
            raise InputError(
                f"at ({when.isoformat()}) must be after the memory's valid_from ({old.valid_from.isoformat()}): news "
                "cannot end a fact before it began"
            )
        patch = MemoryPatch(content=content, category=Category.parse(category) if category is not None else None)
        vector = await self._embed(content)
        with fenced(Fence(ref, None)):
            return await supersede(
                self.store, ref, old, patch, vector, at=when, actor="user", note="superseded through the API"
            )

    @renamed(user="user_id")
    async def edit(
        self,
        user_id: str | UserRef,
        memory_id: str,
        *,
        content: str | None = None,
        category: str | Category | None = None,
        confidence: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        tenant: str | None = None,
    ) -> Memory:
        """Change content (re-embedded), category, confidence or metadata (the whole object is replaced; ``{}``
        clears it); the change is recorded in the history."""
        if content is None and category is None and confidence is None and metadata is None:
            raise InputError("nothing to change: pass new content, category, confidence or metadata")
        parsed = Category.parse(category) if category is not None else None
        patch = MemoryPatch(content, parsed, confidence, metadata=metadata)
        embedding = await self._embed(content) if content is not None else None
        ref = _user(user_id, tenant)
        with fenced(Fence(ref, None)):
            return await self.store.memories.update(ref, memory_id, patch, embedding, action=HistoryAction.UPDATE)

    @renamed(user="user_id")
    async def forget(
        self,
        user_id: str | UserRef,
        memory_id: str,
        *,
        by: str | DeletedBy = DeletedBy.USER,
        note: str = "",
        tenant: str | None = None,
    ) -> Memory:
        """Soft delete: the memory stops being used but can be restored. What it came from and what was derived
        from it stop reaching the model with it (the exchanges that said it, the session facts, turn summaries and
        summary lines that carry it: :mod:`memstack.capture.forget`); :meth:`restore` shows them again.

        Idempotent: a memory no longer active (forgotten, or merged into another) is returned as it is, nothing
        written, so a retried ``DELETE`` answers as the first did (it was an error the second time)."""
        try:
            who = DeletedBy(by)
        except ValueError:
            raise InputError(f"forgotten by must be 'ai' or 'user', got {by!r}") from None
        ref = _user(user_id, tenant)
        with fenced(await self._pin(ref)):  # what it hides is read first: an erasure meanwhile refuses the write
            memory = await self.store.memories.get(ref, memory_id)
            if not memory.is_active:
                return memory
            hide = await self._forgetter().hidden_by(ref, memory)
            try:
                forgotten = await self.store.memories.forget(ref, memory_id, by=who, note=note, hide=hide)
            except InputError:  # forgotten by another call meanwhile: the same outcome
                current = await self.store.memories.get(ref, memory_id)
                if current.is_active:
                    raise
                return current
        self._forgot(ref)
        return forgotten

    @renamed(user="user_id")
    async def forget_about(
        self, user_id: str | UserRef, query: str, *, dry_run: bool = False, tenant: str | None = None
    ) -> Forgetting:
        """Forget every active memory ``query`` is about ("my cat": those that hold its words or are close to it in
        meaning, and those naming what they name: :meth:`memstack.capture.forget.Forgetter.matching`), each as
        :meth:`forget` does, with what it hides. ``dry_run``: the preview: what would be forgotten and hidden,
        nothing changed. Each memory is restorable on its own."""
        from memstack.capture.forget import unique

        ref = _user(user_id, tenant)
        forgetter = self._forgetter()
        with fenced(await self._pin(ref)):
            memories = await forgetter.matching(ref, query)
            plans = [(m, await forgetter.hidden_by(ref, m)) for m in memories]
            if dry_run:
                return Forgetting(query, tuple(memories), tuple(unique(i for _, items in plans for i in items)), True)
            done: builtins.list[Memory] = []
            hidden: builtins.list[HiddenItem] = []
            note = f"forgotten with everything about {query.strip()[:200]!r}"
            for memory, items in plans:
                try:
                    forgot = await self.store.memories.forget(ref, memory.id, by=DeletedBy.USER, note=note, hide=items)
                except (InputError, NotFound):  # forgotten or deleted meanwhile: nothing of it left to do
                    continue
                done.append(forgot)
                hidden += items
        self._forgot(ref)
        return Forgetting(query, tuple(done), tuple(unique(hidden)), False)

    def _forgetter(self) -> Forgetter:
        from memstack.capture.forget import Forgetter

        if self._forgetting is None or self._forgetting.store is not self.store:
            self._forgetting = Forgetter(self.store, self.embedder)
        return self._forgetting

    def _forgot(self, user: UserRef) -> None:
        """This process's copies of the user's recent conversation may hold what was just hidden: drop them (recall's
        index of the archive notices by itself, in every process)."""
        if self._turns is not None:
            self._turns.forgotten(user)

    @renamed(user="user_id")
    async def restore(
        self, user_id: str | UserRef, memory_id: str, *, tier: str | None = None, tenant: str | None = None
    ) -> Memory:
        """Make a forgotten memory active again, and show again what its forget hid; the tier limit applies."""
        tier_name, limit = self._limit(tier)
        ref = _user(user_id, tenant)
        try:
            with fenced(Fence(ref, None)):
                return await self.store.memories.restore(ref, memory_id, limit=limit)
        except LimitReached as full:
            raise LimitReached(tier_name, full.limit) from None

    @renamed(user="user_id")
    async def delete(self, user_id: str | UserRef, memory_id: str, *, tenant: str | None = None) -> None:
        """Permanent delete: content and vector are gone; only the history remains. What the memory came from and
        what was derived from it stay hidden from the model for good (hidden now if the memory was active); the
        conversation itself stays the user's record (:meth:`export`) until :meth:`erase`.

        Idempotent: deleting a memory already deleted for good (its history says so) does nothing and is no error;
        an id the user never had is ``NotFound``."""
        ref = _user(user_id, tenant)
        with fenced(await self._pin(ref)):
            try:
                memory = await self.store.memories.get(ref, memory_id)
            except NotFound:
                if await self._deleted(ref, memory_id):
                    return
                raise
            hide = await self._forgetter().hidden_by(ref, memory) if memory.is_active else []
            try:
                await self.store.memories.delete(ref, memory_id, hide=hide)
            except NotFound:  # deleted by another call meanwhile: the same outcome
                if not await self._deleted(ref, memory_id):
                    raise
        self._forgot(ref)

    async def _deleted(self, user: UserRef, memory_id: str) -> bool:
        """Whether ``memory_id`` was the user's and was deleted for good (its history outlives it)."""
        try:
            events = await self.store.index.history(user, memory_id)
        except NotFound:
            return False
        return bool(events) and events[-1].action is HistoryAction.DELETE

    @renamed(user="user_id")
    async def history(
        self, user_id: str | UserRef, memory_id: str, *, tenant: str | None = None
    ) -> builtins.list[MemoryEvent]:
        return await self.store.index.history(_user(user_id, tenant), memory_id)

    @renamed(user="user_id")
    async def count(self, user_id: str | UserRef, *, tenant: str | None = None) -> int:
        """Active memories of the user."""
        return await self.store.index.count_active(_user(user_id, tenant))

    @renamed(user="user_id")
    async def usage(self, user_id: str | UserRef, *, tier: str | None = None, tenant: str | None = None) -> MemoryUsage:
        """Active memories against ``tier``'s limit, the automatic captures a full tier kept out (all time), and
        the user's model calls by role and model with tokens and estimated cost (``models``: since this process
        started, :mod:`memstack.observe.usage`)."""
        tier_name, limit = self._limit(tier)
        ref = _user(user_id, tenant)
        dropped = await self.store.drops.get(ref)
        active = await self.count(user_id, tenant=tenant)
        models = self._telemetry.usage.user(ref)
        return MemoryUsage(tier_name, active, limit, dropped.count, dropped.last_at, models)

    @renamed(user="user_id")
    async def memories_used(
        self, user_id: str | UserRef, context_id: str, *, tenant: str | None = None
    ) -> builtins.list[UsedMemory]:
        """The long-term memories the response with ``context_id`` used (kept in its context), as they are now:
        forgotten ones included (inactive), permanently deleted ones with ``memory=None``."""
        from memstack.capture.transparency import memories_used

        return await memories_used(self.store, _user(user_id, tenant), context_id)

    @renamed(user="user_id")
    async def consolidate(
        self, user_id: str | UserRef, *, dry_run: bool = False, tenant: str | None = None
    ) -> builtins.list[MergeResult]:
        """Merge related memories of the user into richer ones; the originals are forgotten with ``merged_into``
        (restorable) and every step is in their history. With ``summarizer_model`` configured the merged text is
        written by that model (checked, else the offline merge); ``dry_run`` shows the merges without storing."""
        from memstack.capture.consolidate import Consolidator, LLMMerger

        ref = _user(user_id, tenant)
        with fenced(await self._pin(ref)), accounting(Account(self._telemetry, ref.tenant, ref.user_id)):
            if self.config.summarizer_model is None:
                return await Consolidator(self.store, self.embedder).consolidate(ref, dry_run=dry_run)
            from memstack.models import get_model

            async with get_model(self.config.summarizer_model) as model:
                consolidator = Consolidator(self.store, self.embedder, merger=LLMMerger(model))
                return await consolidator.consolidate(ref, dry_run=dry_run)
