"""The LLM update judge: with an LLM classifier configured, the same model decides what news does to memories.

For each candidate that has near memories (cosine ≥ :data:`SHOW_COSINE`, at most :data:`SHOW` of them), the model
gets the ``capture.update`` prompt: the new fact, the memories as ``m1: …``, ``m2: …`` (short ids it can copy
reliably), and answers ``{"action": "add|update|delete|none", "id": "m2", "reason": "…"}``. The answer is checked:

* the action must be one of the four, and ``update`` / ``delete`` / ``none`` must name an id that was shown;
  anything else (an id it invented, a missing id, an unknown action) is an ``add`` (the dedup rule still decides
  duplicate / new), with the reason saying why;
* a failing model (malformed JSON, timeout, HTTP error, after one retry) is not an ``add``: the offline judge
  (:class:`~memstack.capture.updates.OfflineUpdates`) decides instead, and the reason says the model failed.

The verdict's ``judge`` is ``llm:<model>``, so the memory's history note records which model superseded it and why.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from memstack.capture.updates import OfflineUpdates, UpdateKind, UpdateVerdict
from memstack.errors import ProviderError
from memstack.models import ChatModel, Message, with_retry
from memstack.prompts import get_prompt
from memstack.types import Candidate, ScoredMemory

__all__ = ["SHOW", "SHOW_COSINE", "LLMUpdates", "parse_verdict"]

log = logging.getLogger(__name__)

#: At most this many near memories are shown to the model.
SHOW = 5
#: Memories less similar than this are not shown; with none left the candidate is added without a model call.
SHOW_COSINE = 0.3
_NAMED = (UpdateKind.UPDATE, UpdateKind.DELETE, UpdateKind.NONE)


def parse_verdict(reply: dict[str, Any], shown: dict[str, str], judge: str) -> UpdateVerdict:
    """The model's reply as a verdict, validated against the ``shown`` ids (``m1`` → memory id)."""
    raw_action = str(reply.get("action", "")).strip().lower()
    reason = str(reply.get("reason") or "")[:300]
    try:
        kind = UpdateKind(raw_action)
    except ValueError:
        return UpdateVerdict.add(f"the model answered an unknown action {raw_action!r}; added", judge)
    if kind is UpdateKind.ADD:
        return UpdateVerdict.add(reason or "the model said add", judge)
    label = str(reply.get("id") or "").strip()
    memory_id = shown.get(label) or (label if label in shown.values() else None)
    if memory_id is None:
        return UpdateVerdict.add(
            f"the model chose {kind.value} for {label or 'no id'}, not a memory shown; added", judge
        )
    return UpdateVerdict(kind, memory_id, reason or f"the model said {kind.value}", judge)


class LLMUpdates:
    """Asks ``model`` (not owned: the classifier's) whether a candidate adds to, updates, deletes or repeats one of
    its near memories. ``timeout_s`` bounds each attempt; ``attempts`` is 2 (one retry)."""

    def __init__(self, model: ChatModel, *, timeout_s: float = 8.0, attempts: int = 2) -> None:
        self._model = model
        self.timeout_s = timeout_s
        self.attempts = attempts
        self._fallback = OfflineUpdates()

    @property
    def name(self) -> str:
        return f"llm:{self._model.name}"

    async def judge(self, candidate: Candidate, nearest: Sequence[ScoredMemory]) -> UpdateVerdict:
        near = [hit for hit in nearest if hit.score >= SHOW_COSINE][:SHOW]
        if not near:
            return UpdateVerdict.add("no memory close enough to compare", self.name)
        shown = {f"m{i}": hit.memory.id for i, hit in enumerate(near, start=1)}
        lines = "\n".join(f"m{i}: {hit.memory.content}" for i, hit in enumerate(near, start=1))
        prompt = get_prompt("capture.update").render(
            fact=candidate.content, category=candidate.category.value, memories=lines
        )

        async def call() -> dict[str, Any]:
            return await self._model.complete_json([Message.user(prompt)], temperature=0.0, timeout=self.timeout_s)

        try:
            reply = await with_retry(call, attempts=self.attempts)
        except ProviderError as exc:
            log.warning("the update judge %s failed (%s); the offline judge decides", self.name, type(exc).__name__)
            offline = self._fallback.decide(candidate.content, nearest)
            why = f"{self.name} failed ({type(exc).__name__}); offline: {offline.reason}"
            return UpdateVerdict(offline.kind, offline.memory_id, why, offline.judge)
        return parse_verdict(reply, shown, self.name)

    async def aclose(self) -> None:
        """Nothing to close: the model belongs to the classifier."""
