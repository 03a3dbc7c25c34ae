"""Consolidation: related memories of one user ("studying for the MCAT", "MCAT is in June", "nervous about MCAT
verbal") become one richer memory; the originals are soft-deleted with ``merged_into`` and every step is history.

**Grouping** (the same for both variants, no model): the user's active memories without an expiry are embedded in
one batch; a topic word (a content word shared by 2 to ``max_group`` memories, not a generic verb such as "likes")
proposes a group, and the members closer than ``min_cosine`` to the group's centroid form it. Words shared by more
memories are tried first; a memory joins one group at most; memories of different agents never merge.

**Merging**: :class:`OfflineMerger` joins the statements in the order they were learned (an honest baseline: no
facts lost, none invented). :class:`LLMMerger` asks a chat model (``memory.consolidate`` prompt) for one statement
and checks it: no numbers or dates that the originals lack, few new words, not an instruction to the assistant
(the write-time guard); anything else — or a malformed reply after one retry — falls back to the offline merge.

**Durability**: each merge is a ``consolidate`` job recorded before the first write; the new memory is found again
(same text, source ``consolidated``) if a crash hit between its insert and the checkpoint, so a resumed merge never
stores it twice, and originals already merged are skipped.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from memstack.capture.rewrite import SUBJECT
from memstack.capture.values import is_value, values
from memstack.capture.writer import Guard, default_guard
from memstack.embed import Embedder
from memstack.errors import InputError, MemstackError, ProviderError
from memstack.models import ChatModel, Message, with_retry
from memstack.observe import role
from memstack.prompts import get_prompt
from memstack.store.base import Store
from memstack.store.fence import Fence, fenced
from memstack.text import GENERIC_TOPIC_WORDS, STOP_WORDS, comparison_words, stem, words
from memstack.types import (
    MAX_CONTENT_CHARS,
    Category,
    DeletedBy,
    Job,
    JobStatus,
    Memory,
    MemoryFilter,
    NewMemory,
    Source,
    UserRef,
    new_id,
)

__all__ = [
    "CONSOLIDATE",
    "ConsolidationSettings",
    "Consolidator",
    "LLMMerger",
    "MergeGroup",
    "MergeResult",
    "Merger",
    "OfflineMerger",
]

log = logging.getLogger(__name__)

#: The job kind of one merge.
CONSOLIDATE = "consolidate"

# Shared by unrelated facts ("likes tea", "likes hiking"): never a topic on their own.
_GENERIC = frozenset(stem(w) for w in GENERIC_TOPIC_WORDS)
# The subject every memory is written about ("User …").
_SUBJECT = frozenset(words(SUBJECT))


@dataclass(frozen=True, slots=True)
class ConsolidationSettings:
    min_cosine: float = 0.55  # to the group's centroid
    min_group: int = 2
    max_group: int = 6
    page: int = 500  # memories read per store call

    def __post_init__(self) -> None:
        if not 2 <= self.min_group <= self.max_group:
            raise InputError("need 2 <= min_group <= max_group")
        if not -1.0 <= self.min_cosine <= 1.0:
            raise InputError(f"min_cosine must be a cosine (-1..1), got {self.min_cosine}")


@dataclass(frozen=True, slots=True)
class MergeGroup:
    topic: str  # the shared word that proposed the group
    memories: tuple[Memory, ...]  # oldest first
    cohesion: float  # mean cosine to the centroid


@dataclass(frozen=True, slots=True)
class MergeResult:
    merged: Memory
    originals: tuple[str, ...]
    method: str  # "offline", "llm:<model>", or "offline (…)" when the model's merge was refused


class Merger(Protocol):
    @property
    def name(self) -> str: ...

    async def merge(self, memories: Sequence[Memory]) -> tuple[str, Category, str]:
        """The merged statement, its category and how it was made (for the result and the history note)."""
        ...


def _category(memories: Sequence[Memory]) -> Category:
    counts = Counter(m.category for m in memories)
    best = max(counts.values())
    return next(m.category for m in memories if counts[m.category] == best)


class OfflineMerger:
    """Joins the statements, oldest first, as sentences: nothing lost, nothing invented."""

    name = "offline"

    async def merge(self, memories: Sequence[Memory]) -> tuple[str, Category, str]:
        seen: set[str] = set()
        parts = []
        for m in memories:
            text = m.content.strip().rstrip(".;")
            if text.lower() not in seen:
                seen.add(text.lower())
                parts.append(text)
        return ". ".join(parts) + ".", _category(memories), self.name


def _content_words(text: str) -> set[str]:
    return {stem(w) for w in comparison_words(text) if w not in STOP_WORDS and w not in _SUBJECT and not is_value(w)}


class LLMMerger:
    """Merges with a chat model; refuses (falls back to :class:`OfflineMerger`) a statement that adds numbers or
    dates, brings in more than ``max_new_words`` of the words, or reads as an instruction."""

    def __init__(
        self, model: ChatModel, *, guard: Guard | None = None, max_new_words: float = 0.4, timeout_s: float = 20.0
    ) -> None:
        self.model = model
        self.max_new_words = max_new_words
        self.timeout_s = timeout_s
        self._guard = guard or default_guard()
        self._fallback = OfflineMerger()

    @property
    def name(self) -> str:
        return f"llm:{self.model.name}"

    async def merge(self, memories: Sequence[Memory]) -> tuple[str, Category, str]:
        lines = "\n".join(f"- [{m.category.value}] {m.content}" for m in memories)
        prompt = get_prompt("memory.consolidate").render(memories=lines)

        async def call() -> dict[str, Any]:
            with role("summarizer"):  # the merging of memories is the summarizer model's work
                return await self.model.complete_json([Message.user(prompt)], temperature=0.0, timeout=self.timeout_s)

        try:
            reply = await with_retry(call, attempts=2)
        except ProviderError as exc:
            return await self._refuse(memories, f"model failed: {type(exc).__name__}")
        content = reply.get("content")
        if not isinstance(content, str) or not content.strip() or len(content) > MAX_CONTENT_CHARS:
            return await self._refuse(memories, "no usable content")
        why = self._implausible(content, memories)
        if why is not None:
            return await self._refuse(memories, why)
        try:
            category = Category.parse(str(reply.get("category") or _category(memories).value))
        except InputError:
            category = _category(memories)
        return content.strip(), category, self.name

    def _implausible(self, content: str, memories: Sequence[Memory]) -> str | None:
        if self._guard(content).is_instruction:
            return "reads as an instruction to the assistant"
        source = " ".join(m.content for m in memories)
        extra_values = values(content) - values(source)
        if extra_values:
            return f"invented values {sorted(extra_values)}"
        words = _content_words(content)
        new = words - _content_words(source)
        if words and len(new) / len(words) > self.max_new_words:
            return f"{len(new)} of {len(words)} words are not in the memories"
        return None

    async def _refuse(self, memories: Sequence[Memory], why: str) -> tuple[str, Category, str]:
        log.warning("consolidation: the model's merge was refused (%s); using the offline merge", why)
        content, category, _ = await self._fallback.merge(memories)
        return content, category, f"offline ({self.name} refused: {why})"


class Consolidator:
    """Finds and merges related memories of a user. ``merger`` defaults to :class:`OfflineMerger`."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        merger: Merger | None = None,
        settings: ConsolidationSettings | None = None,
        lease_s: float = 120.0,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.merger = merger or OfflineMerger()
        self.settings = settings or ConsolidationSettings()
        self.lease_s = lease_s
        self.owner = new_id("consolidate")

    async def _active(self, user: UserRef) -> list[Memory]:
        out: list[Memory] = []
        while True:
            page = await self.store.index.list(user, MemoryFilter(limit=self.settings.page, offset=len(out)))
            out += page
            if len(page) < self.settings.page:
                return [m for m in out if m.expires_at is None]

    async def plan(self, user: UserRef) -> list[MergeGroup]:
        """The groups that :meth:`consolidate` would merge (nothing is changed)."""
        memories = await self._active(user)
        if len(memories) < self.settings.min_group:
            return []
        memories.sort(key=lambda m: (m.observed_at or m.created_at, m.id))
        vectors = await self.embedder.embed([m.content for m in memories])
        words = [_content_words(m.content) - _GENERIC for m in memories]
        # Memories merge only within one scope: the same agent (or shared) and the same metadata (the caller's labels).
        scopes = [json.dumps(m.metadata, sort_keys=True) for m in memories]
        holders: dict[tuple[str | None, str, str], list[int]] = {}
        for i, ws in enumerate(words):
            for w in ws:
                if len(w) >= 3 and w.isalpha():
                    holders.setdefault((memories[i].agent_id, scopes[i], w), []).append(i)
        s = self.settings
        topics = sorted(
            ((key, idx) for key, idx in holders.items() if s.min_group <= len(idx) <= s.max_group),
            key=lambda item: (-len(item[1]), item[0][2], item[0][1]),
        )
        taken: set[int] = set()
        groups: list[MergeGroup] = []
        for (_, _, word), idx in topics:
            free = [i for i in idx if i not in taken]
            if len(free) < s.min_group:
                continue
            centroid = vectors[free].mean(axis=0)
            centroid /= float(np.linalg.norm(centroid)) or 1.0
            close = [(float(vectors[i] @ centroid), i) for i in free]
            members = sorted(i for c, i in close if c >= s.min_cosine)
            if len(members) < s.min_group:
                continue
            cohesion = float(np.mean([c for c, i in close if i in members]))
            taken.update(members)
            groups.append(MergeGroup(word, tuple(memories[i] for i in members), round(cohesion, 3)))
        return groups

    async def consolidate(self, user: UserRef, *, dry_run: bool = False) -> list[MergeResult]:
        """Merge every group of :meth:`plan`; ``dry_run`` returns the merges without storing them."""
        results = []
        for group in await self.plan(user):
            content, category, method = await self.merger.merge(group.memories)
            if dry_run:
                preview = _merged_memory(user, group.memories, content, category)
                results.append(MergeResult(preview, tuple(m.id for m in group.memories), method))
                continue
            payload = {
                "tenant": user.tenant,
                "user_id": user.user_id,
                "ids": [m.id for m in group.memories],
                "content": content,
                "category": category.value,
                "method": method,
            }
            key = hashlib.blake2b(
                "\x1f".join([user.tenant, user.user_id, *sorted(payload["ids"])]).encode(), digest_size=16
            ).hexdigest()
            job = await self.store.jobs.enqueue(CONSOLIDATE, key, payload, owner=self.owner, lease_s=self.lease_s)
            if job.status is JobStatus.RUNNING and job.owner == self.owner:
                results.append(await self._apply(job))
        return results

    async def resume_pending(self) -> int:
        """Finish merges a crash interrupted; returns how many."""
        done = 0
        while jobs := await self.store.jobs.claim_pending(CONSOLIDATE, 8, owner=self.owner, lease_s=self.lease_s):
            for job in jobs:
                # Pinned before the merge reads the originals (gone if the user was erased since the claim); an
                # erasure after it refuses the merge's writes (memstack.store.fence).
                user = UserRef(str(job.payload["user_id"]), str(job.payload["tenant"]))
                with fenced(Fence(user, await self.store.users.epoch(user))):
                    await self._apply(job)
                done += 1
        return done

    async def _apply(self, job: Job) -> MergeResult:
        p = job.payload
        user = UserRef(str(p["user_id"]), str(p["tenant"]))
        ids = [str(i) for i in p["ids"]]
        content, category, method = str(p["content"]), Category.parse(str(p["category"])), str(p["method"])
        try:
            originals = [await self.store.memories.get(user, i) for i in ids]
            vector = (await self.embedder.embed([content]))[0]
            merged_id = job.state.get("merged_id")
            if merged_id is None:
                hits = await self.store.index.nearest(user, vector, 3)
                same = [h.memory for h in hits if h.memory.content == content]
                again = [m for m in same if m.source is Source.CONSOLIDATED]
                if again:
                    merged = again[0]
                else:
                    new = _new_memory(originals, content, category)
                    merged = await self.store.memories.add(user, new, vector, actor="system")
                await self.store.jobs.checkpoint(job.id, {"merged_id": merged.id}, lease_s=self.lease_s)
            else:
                merged = await self.store.memories.get(user, str(merged_id))
            for memory in originals:
                if memory.is_active:
                    note = f"consolidated into {merged.id} ({method})"
                    await self.store.memories.forget(user, memory.id, by=DeletedBy.AI, merged_into=merged.id, note=note)
        except MemstackError as exc:
            await self.store.jobs.fail(job.id, f"{type(exc).__name__}: {exc}", retry_at=None)
            raise
        await self.store.jobs.complete(job.id, {"merged_id": merged.id, "originals": ids, "method": method})
        return MergeResult(merged, tuple(ids), method)


def _new_memory(originals: Sequence[Memory], content: str, category: Category) -> NewMemory:
    turns = tuple(dict.fromkeys(t for m in originals for t in m.source_turn_ids))
    observed = [m.observed_at for m in originals if m.observed_at is not None]
    return NewMemory(
        content=content,
        category=category,
        source=Source.CONSOLIDATED,
        confidence=max(m.confidence for m in originals),
        agent_id=originals[0].agent_id,
        observed_at=max(observed) if observed else None,
        source_turn_ids=turns,
        metadata=originals[0].metadata,  # one scope per group: the originals' metadata is the same
    )


def _merged_memory(user: UserRef, originals: Sequence[Memory], content: str, category: Category) -> Memory:
    """What a merge would store (for a dry run): not in the store, id ``preview``."""
    new = _new_memory(originals, content, category)
    now = max(m.updated_at for m in originals)
    return Memory(
        id="preview",
        user_id=user.user_id,
        tenant=user.tenant,
        agent_id=new.agent_id,
        content=new.content,
        category=new.category,
        source=new.source,
        confidence=new.confidence,
        is_active=True,
        deleted_by=None,
        created_at=now,
        updated_at=now,
        observed_at=new.observed_at,
        source_turn_ids=new.source_turn_ids,
        metadata=new.metadata,
    )
