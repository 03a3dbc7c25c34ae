"""The memory tools of one turn: ``recall_memory``, ``save_memory``, ``forget_memory`` bound to its user and tier.

Only the tools the agent lists (``tools:`` in its YAML) are offered, and only when memory is on for the turn. The
work is :class:`memstack.capture.tools.MemoryTools` (ranking as layer 6, the poisoning check, dedup and tier limits
for saves, soft delete for forgets); what a save changed joins the turn's "Memory updated" badge.

What a tool returns crosses the same trust boundary as the memory layer: every stored text in it passes the turn's
content guard (a memory that tries to take authority is withheld, one the guard only suspects is kept and marked),
and the model is sent the result inside a data block of its own with those flags, links neutralized
(:func:`memstack.context.render.wrap_tool_output`). ``ToolUse.result`` is the screened JSON; ``model_content`` what
the model read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Sequence
from typing import Any

from memstack.capture.tools import MemoryTools
from memstack.context.render import wrap_tool_output
from memstack.guard import LOW_CONFIDENCE, RULES, ContentGuard
from memstack.models import ToolCall, ToolSpec
from memstack.types import ToolUse, UserRef

__all__ = ["MemoryToolBox"]


class MemoryToolBox:
    """A :class:`~memstack.turn.phase1.ToolBox` over the memory tools, for one user, tier and agent."""

    def __init__(
        self,
        tools: MemoryTools,
        user: UserRef,
        names: Collection[str],
        *,
        tier: str | None,
        guard: ContentGuard | None = None,
    ) -> None:
        self._tools = tools
        self._user = user
        self._tier = tier
        self._guard = guard or RULES
        self._specs = tuple(spec for spec in tools.specs if spec.name in names)

    @property
    def specs(self) -> Sequence[ToolSpec]:
        return self._specs

    async def call(self, call: ToolCall) -> ToolUse:
        if call.name not in {spec.name for spec in self._specs}:
            offered = ", ".join(spec.name for spec in self._specs)
            result = {"error": f"unknown tool {call.name!r}; the tools offered are {offered}"}
            text = json.dumps(result)
            return ToolUse(call.name, call.arguments, text, error=True, model_content=wrap_tool_output(text))
        outcome = await self._tools.execute(self._user, call, tier=self._tier)
        screened, flags = await asyncio.to_thread(screen_result, dict(outcome.result), self._guard)  # may embed
        text = json.dumps(screened, ensure_ascii=False, default=str)
        return ToolUse(
            call.name,
            call.arguments,
            text,
            error=not outcome.ok,
            updates=outcome.updates,
            upgrade_prompt=outcome.upgrade_prompt,
            model_content=wrap_tool_output(text, flags=flags),
        )


#: The keys of a memory tool's result that hold stored memories (``recall_memory``'s hits, ``forget_memory``'s
#: closest candidates).
_MEMORY_LISTS = ("memories", "closest")


def screen_result(result: dict[str, Any], guard: ContentGuard) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``result`` with every stored memory in it through ``guard``: one that tries to take authority is withheld
    (counted in ``withheld``), one only suspected is kept with its ``flags``; and the flags of what was kept."""
    items = [(key, i, m) for key in _MEMORY_LISTS for i, m in enumerate(result.get(key) or ()) if isinstance(m, dict)]
    verdicts = guard.scan_many([(str(m.get("content", "")), False) for _, _, m in items])
    drop: set[tuple[str, int]] = set()
    kept_flags: list[str] = []
    for (key, i, memory), flags in zip(items, verdicts, strict=True):
        if not flags:
            continue
        if flags == LOW_CONFIDENCE:
            result[key][i] = {**memory, "flags": list(flags)}
            kept_flags.extend(flags)
        else:
            drop.add((key, i))
    if drop:
        for key in _MEMORY_LISTS:
            if key in result:
                result[key] = [m for i, m in enumerate(result[key]) if (key, i) not in drop]
        result["withheld"] = len(drop)
        result["withheld_why"] = "stored text that tries to give the assistant instructions is never shown to it"
    return result, tuple(dict.fromkeys(kept_flags))
