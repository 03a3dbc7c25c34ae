"""The memory tools of one turn: ``recall_memory``, ``save_memory``, ``forget_memory`` bound to its user and tier.

Only the tools the agent lists (``tools:`` in its YAML) are offered, and only when memory is on for the turn. The
work is :class:`memstack.capture.tools.MemoryTools` (ranking as layer 6, the poisoning check, dedup and tier limits
for saves, soft delete for forgets); what a save changed joins the turn's "Memory updated" badge.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from memstack.capture.tools import MemoryTools
from memstack.models import ToolCall, ToolSpec
from memstack.types import ToolUse, UserRef

__all__ = ["MemoryToolBox"]


class MemoryToolBox:
    """A :class:`~memstack.turn.phase1.ToolBox` over the memory tools, for one user, tier and agent."""

    def __init__(self, tools: MemoryTools, user: UserRef, names: Collection[str], *, tier: str | None) -> None:
        self._tools = tools
        self._user = user
        self._tier = tier
        self._specs = tuple(spec for spec in tools.specs if spec.name in names)

    @property
    def specs(self) -> Sequence[ToolSpec]:
        return self._specs

    async def call(self, call: ToolCall) -> ToolUse:
        if call.name not in {spec.name for spec in self._specs}:
            offered = ", ".join(spec.name for spec in self._specs)
            result = {"error": f"unknown tool {call.name!r}; the tools offered are {offered}"}
            return ToolUse(call.name, call.arguments, json.dumps(result), error=True)
        outcome = await self._tools.execute(self._user, call, tier=self._tier)
        return ToolUse(
            call.name,
            call.arguments,
            json.dumps(dict(outcome.result), ensure_ascii=False, default=str),
            error=not outcome.ok,
            updates=outcome.updates,
            upgrade_prompt=outcome.upgrade_prompt,
        )
