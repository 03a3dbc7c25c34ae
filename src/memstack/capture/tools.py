"""The memory tools the chat model may call: ``recall_memory``, ``save_memory``, ``forget_memory`` (DESIGN §3).

::

    tools = MemoryTools(store, embedder, tiers=config.tiers)
    response = await model.complete(messages, tools=MEMORY_TOOLS)
    for call in response.tool_calls:
        outcome = await tools.execute(user, call, tier="free")
        messages += [response.message, outcome.message(call.id)]   # outcome.updates feed the badge

* ``recall_memory(query)`` — the user's memories that match, ranked like layer 6 (hybrid, weighted, unexpired);
* ``save_memory(content, category)`` — an **explicit** save: the poisoning check, the dedup rule and the tier limit
  apply as for automatic capture; at the limit the outcome carries the upgrade prompt;
* ``forget_memory(id | query)`` — a **soft** delete by the assistant (``deleted_by=ai``): the memory stops being
  used but the user can restore it. As with every forget the user asks for, what the memory came from and what was
  derived from it are hidden with it (:mod:`memstack.capture.forget`). A query must point at one memory clearly
  (see :data:`FORGET_MIN_COSINE`); otherwise the model is shown the closest ones and asked for an id. Permanent
  deletion is the user's alone (``AsyncMemstack.delete``), never a tool.

Mistakes in a call (unknown tool, missing or wrong arguments, unknown id) are answered to the model as an error
object it can act on; they are not raised.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstack.capture.dedup import DedupParams, DedupRule, params_for
from memstack.capture.forget import FORGET_MIN_COSINE, Forgetter
from memstack.capture.scoring import MemoryScorer
from memstack.capture.writer import Guard, MemoryWriter, default_guard, screen_candidates
from memstack.config import TierLimits
from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.models import Message, ToolCall, ToolSpec
from memstack.store.base import Store
from memstack.types import Candidate, Category, DeletedBy, Memory, MemoryUpdate, UserRef, utcnow

__all__ = [
    "FORGET_MEMORY",
    "FORGET_MIN_COSINE",
    "MEMORY_TOOLS",
    "RECALL_MEMORY",
    "SAVE_MEMORY",
    "MemoryTools",
    "ToolOutcome",
]

_CATEGORIES = [c.value for c in Category]

RECALL_MEMORY = ToolSpec(
    "recall_memory",
    "Search what you remember about the user (long-term memories from earlier conversations). Use it when the "
    "answer may depend on something the user told you before that is not already in your context.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in a few words."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "At most this many (5)."},
        },
        "required": ["query"],
    },
)

SAVE_MEMORY = ToolSpec(
    "save_memory",
    "Remember a durable fact about the user for future conversations, when the user asks you to remember it. "
    "Write it as one short third-person statement, e.g. 'User is allergic to peanuts'.",
    {
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "The fact, one short statement about the user."},
            "category": {"type": "string", "enum": _CATEGORIES, "description": "The kind of fact (general)."},
        },
        "required": ["content"],
    },
)

FORGET_MEMORY = ToolSpec(
    "forget_memory",
    "Stop using a memory when the user asks you to forget something. Pass the memory's id if you know it, "
    "otherwise a query describing it. The user can undo this from their settings.",
    {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The memory's id, e.g. mem_..."},
            "query": {"type": "string", "description": "What the memory is about, when you do not know its id."},
        },
    },
)

MEMORY_TOOLS: tuple[ToolSpec, ...] = (RECALL_MEMORY, SAVE_MEMORY, FORGET_MEMORY)

#: A forget query must be at least :data:`FORGET_MIN_COSINE` close (cosine) to the memory it names, and clearly
#: closer to it than to the next one (``FORGET_MARGIN``); otherwise the closest memories are listed and an id is
#: asked for.
FORGET_MARGIN = 0.05


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The answer to one tool call: ``result`` goes back to the model (as JSON), ``updates`` to the badge."""

    name: str
    result: Mapping[str, Any]
    ok: bool
    updates: tuple[MemoryUpdate, ...] = ()
    upgrade_prompt: str | None = None
    forgotten: tuple[str, ...] = ()

    def message(self, tool_call_id: str) -> Message:
        """The tool message answering the call."""
        return Message.tool(tool_call_id, json.dumps(dict(self.result), ensure_ascii=False, default=str))


def _brief(memory: Memory) -> dict[str, Any]:
    return {"id": memory.id, "content": memory.content, "category": memory.category.value}


def _error(name: str, message: str) -> ToolOutcome:
    return ToolOutcome(name, {"error": message}, ok=False)


class MemoryTools:
    """Executes the memory tools for one store (not owned). ``guard``: the poisoning check for saves (default
    ``memstack.guard.check_memory_candidate``); ``dedup``: the rule's parameters (default: calibrated for
    the embedder); ``writer``: pass the capture pipeline's (``pipeline.writer``) so saves by the tool and by
    detection are serialised per user; ``on_forget``: called with the user after a forget (the caller drops what
    it keeps of the user's conversation in memory)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        tiers: TierLimits | None = None,
        dedup: DedupParams | None = None,
        guard: Guard | None = None,
        scorer: MemoryScorer | None = None,
        writer: MemoryWriter | None = None,
        clock: Callable[[], datetime] = utcnow,
        on_forget: Callable[[UserRef], None] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.tiers = tiers or TierLimits()
        self.clock = clock
        self.scorer = scorer or MemoryScorer(store, clock=clock)
        self._guard = guard or default_guard()
        self._writer = writer or MemoryWriter(store, DedupRule(dedup or params_for(embedder.name)))
        self._forgetter = Forgetter(store, embedder)
        self._on_forget = on_forget

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return MEMORY_TOOLS

    async def execute(
        self,
        user: UserRef,
        call: ToolCall,
        *,
        tier: str | None = None,
        agent_id: str | None = None,
        turn_ref: str | None = None,
    ) -> ToolOutcome:
        """Run one tool call for ``user``; never raises for the model's mistakes (they become error results)."""
        args = dict(call.arguments)
        try:
            if call.name == RECALL_MEMORY.name:
                return await self.recall(user, _text(args, "query"), limit=_limit(args), agent_id=agent_id)
            if call.name == SAVE_MEMORY.name:
                category = Category.parse(str(args.get("category") or Category.GENERAL.value))
                return await self.save(
                    user, _text(args, "content"), category, tier=tier, agent_id=agent_id, turn_ref=turn_ref
                )
            if call.name == FORGET_MEMORY.name:
                memory_id = args.get("id")
                query = args.get("query")
                if not memory_id and not query:
                    raise InputError("pass the memory's 'id', or a 'query' describing it")
                return await self.forget(
                    user, memory_id=str(memory_id) if memory_id else None, query=str(query) if query else None
                )
        except InputError as exc:  # NotFound included: the model named a memory that is not this user's
            return _error(call.name, str(exc))
        known = ", ".join(s.name for s in MEMORY_TOOLS)
        return _error(call.name, f"unknown tool {call.name!r}; the memory tools are {known}")

    async def recall(self, user: UserRef, query: str, *, limit: int = 5, agent_id: str | None = None) -> ToolOutcome:
        vector = (await self.embedder.embed([query]))[0]
        hits = await self.scorer.recall(user, query, vector, k=limit, agent_id=agent_id)
        memories = [{**_brief(h.memory), "score": round(h.score, 3)} for h in hits]
        return ToolOutcome(RECALL_MEMORY.name, {"memories": memories}, ok=True)

    async def save(
        self,
        user: UserRef,
        content: str,
        category: Category = Category.GENERAL,
        *,
        tier: str | None = None,
        agent_id: str | None = None,
        turn_ref: str | None = None,
    ) -> ToolOutcome:
        limit = self.tiers.limit_for(tier)
        tier_name = self.tiers.name_for(tier)
        now = self.clock()
        candidate = Candidate(content.strip(), category, 1.0, explicit=True, observed_at=now, evidence=content)
        kept, held = await asyncio.to_thread(screen_candidates, [candidate], self._guard)  # the guard may embed
        if held:
            q = held[0]
            return ToolOutcome(
                SAVE_MEMORY.name,
                {"saved": False, "error": q.reason, "flags": list(q.flags)},
                ok=False,
            )
        vector = (await self.embedder.embed([kept[0].content]))[0]
        outcome = await self._writer.write(
            user, kept[0], vector, tier=tier_name, limit=limit, agent_id=agent_id, turn_ref=turn_ref, actor="ai"
        )
        update = outcome.update
        result: dict[str, Any] = {"action": update.action.value, "id": update.id, "content": update.content}
        if outcome.upgrade_prompt:
            result["upgrade_prompt"] = outcome.upgrade_prompt
        return ToolOutcome(
            SAVE_MEMORY.name,
            result,
            ok=update.id is not None,
            updates=(update,),
            upgrade_prompt=outcome.upgrade_prompt,
        )

    async def forget(self, user: UserRef, *, memory_id: str | None = None, query: str | None = None) -> ToolOutcome:
        """Soft-delete one memory by id, or the one memory a query clearly points at."""
        if memory_id is None:
            if not query or not query.strip():
                raise InputError("pass the memory's 'id', or a 'query' describing it")
            vector = (await self.embedder.embed([query]))[0]
            hits = await self.store.index.nearest(user, vector, 3)
            clear = hits and hits[0].score >= FORGET_MIN_COSINE
            if clear and len(hits) > 1 and hits[0].score - hits[1].score < FORGET_MARGIN:
                clear = False
            if not clear:
                closest = [{**_brief(h.memory), "similarity": round(h.score, 3)} for h in hits]
                return ToolOutcome(
                    FORGET_MEMORY.name,
                    {
                        "forgotten": False,
                        "error": "no single memory clearly matches; call again with the id of the one to forget",
                        "closest": closest,
                    },
                    ok=False,
                )
            memory_id = hits[0].memory.id
        target = await self.store.memories.get(user, memory_id)
        hide = await self._forgetter.hidden_by(user, target) if target.is_active else []
        memory = await self.store.memories.forget(
            user, memory_id, by=DeletedBy.AI, note="forgotten by the assistant at the user's request", hide=hide
        )
        if self._on_forget is not None:
            self._on_forget(user)
        return ToolOutcome(
            FORGET_MEMORY.name,
            {"forgotten": True, **_brief(memory), "restorable": True, "hidden_with_it": len(hide)},
            ok=True,
            forgotten=(memory.id,),
        )


def _text(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"'{name}' must be a non-empty string")
    return value.strip()


def _limit(args: Mapping[str, Any]) -> int:
    raw = args.get("limit", 5)
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 1 <= int(raw) <= 20:
        raise InputError("'limit' must be a whole number from 1 to 20")
    return int(raw)
