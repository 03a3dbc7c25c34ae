"""The model update judge: one structured call per batch of candidates decides what each does to the memories.

The design is mem0's (the new facts against their nearest memories, one call, an action per fact) with memstack's
history and fallbacks. For the candidates of one message, every near memory (cosine ≥ :data:`SHOW_COSINE`, at most
:data:`SHOW` per candidate) is shown once as ``m1``, ``m2``…, every candidate as ``f1``, ``f2``… (short ids a model
copies reliably, and no real id it could confuse with another user's), and the ``capture.update`` prompt asks for
``{"decisions": [{"fact": "f1", "action": "add|update|supersede|none", "memory": "m2", "reason": "…"}]}``.

What the answer may do is checked, fact by fact:

* the action must be one of the four; ``update`` / ``supersede`` / ``none`` must name a memory shown **for that
  fact** (an id it invented, a real id, a memory shown only for another fact, a missing id): the fact is added
  (the dedup rule still decides duplicate / new) and the reason says why;
* a fact the answer does not decide, and every fact when the call fails (malformed JSON, a timeout, an HTTP error,
  after one retry), is decided by the ``fallback`` judge (the offline one), and the reason says the model failed.

A candidate with no memory near enough is an ``add`` without a call. A batch larger than :data:`MAX_FACTS` is split
into several calls. Verdicts are kept in a small bounded cache (by a digest of the candidate and the memories
shown), so the same question asked twice in one detection (news checked before it is written) costs one call.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from memstack.capture.judge.base import JudgeItem, UpdateJudge, UpdateKind, UpdateVerdict
from memstack.errors import MalformedResponse, ProviderError
from memstack.models import ChatModel, Message, get_model, with_retry
from memstack.observe import role
from memstack.prompts import get_prompt
from memstack.types import ScoredMemory

__all__ = ["MAX_FACTS", "SHOW", "SHOW_COSINE", "ModelJudge", "parse_decisions"]

log = logging.getLogger(__name__)

#: At most this many near memories per candidate are shown to the model.
SHOW = 5
#: Memories less similar than this are not shown; a candidate with none left is added without a model call.
SHOW_COSINE = 0.3
#: At most this many candidates per call.
MAX_FACTS = 8
#: Characters of one text in the prompt (a memory is at most 2,000; the prompt stays small whatever is stored).
MAX_TEXT_CHARS = 600
#: Verdicts remembered, by digest (a few hundred bytes each).
CACHE_ENTRIES = 512


def _shown(item: JudgeItem) -> list[ScoredMemory]:
    return [hit for hit in item.nearest if hit.score >= SHOW_COSINE][:SHOW]


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"


def _key(item: JudgeItem, shown: Sequence[ScoredMemory]) -> str:
    digest = hashlib.sha256(item.candidate.content.encode())
    for hit in shown:
        digest.update(b"\0" + hit.memory.id.encode() + b"\0" + hit.memory.content.encode())
    return digest.hexdigest()


def parse_decisions(
    reply: dict[str, Any], facts: Sequence[str], shown: dict[str, dict[str, str]], judge: str
) -> dict[str, UpdateVerdict]:
    """The model's ``decisions`` as verdicts by fact label; a fact it did not decide is absent.

    ``facts``: the labels asked about (``f1``…); ``shown``: per fact label, the memory labels shown for it → memory
    id. ``MalformedResponse`` when the reply has no ``decisions`` list (worth the retry)."""
    decisions = reply.get("decisions")
    if not isinstance(decisions, list):
        raise MalformedResponse('the update judge\'s reply has no "decisions" list', body=str(reply)[:500])
    out: dict[str, UpdateVerdict] = {}
    for entry in decisions:
        if not isinstance(entry, dict):
            continue
        fact = str(entry.get("fact") or "").strip()
        if fact not in facts or fact in out:
            continue
        out[fact] = _verdict(entry, shown[fact], judge)
    return out


def _verdict(entry: dict[str, Any], shown: dict[str, str], judge: str) -> UpdateVerdict:
    raw_action = str(entry.get("action") or "").strip().lower()
    reason = " ".join(str(entry.get("reason") or "").split())[:300]
    try:
        kind = UpdateKind(raw_action)
    except ValueError:
        return UpdateVerdict.add(f"the model answered an unknown action {raw_action[:40]!r}; added", judge)
    if kind is UpdateKind.ADD:
        return UpdateVerdict.add(reason or "the model said add", judge)
    label = str(entry.get("memory") or "").strip()
    memory_id = shown.get(label)
    if memory_id is None:
        what = f"{label[:40]!r}" if label else "no memory"
        return UpdateVerdict.add(f"the model chose {kind.value} for {what}, not a memory shown for it; added", judge)
    return UpdateVerdict(kind, memory_id, reason or f"the model said {kind.value}", judge)


class ModelJudge:
    """Judges with ``model`` (closed by :meth:`aclose` when ``owns_model``); ``fallback`` decides what the model
    does not. ``timeout_s`` bounds each attempt; ``attempts`` is 2 (one retry)."""

    def __init__(
        self,
        model: ChatModel,
        fallback: UpdateJudge,
        *,
        timeout_s: float = 8.0,
        attempts: int = 2,
        owns_model: bool = False,
    ) -> None:
        self._model = model
        self._fallback = fallback
        self._owns_model = owns_model
        self.timeout_s = timeout_s
        self.attempts = attempts
        self._cache: OrderedDict[str, UpdateVerdict] = OrderedDict()

    @classmethod
    def from_spec(cls, spec: str, fallback: UpdateJudge, **options: Any) -> ModelJudge:
        """``openai:gpt-4o-mini`` etc.; ``base_url``/``api_key`` go to the model, the rest here."""
        model_options = {k: options.pop(k) for k in ("base_url", "api_key") if k in options}
        return cls(get_model(spec, **model_options), fallback, owns_model=True, **options)

    @property
    def name(self) -> str:
        return f"llm:{self._model.name}"

    async def judge(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        verdicts: list[UpdateVerdict | None] = [None] * len(items)
        asks: list[tuple[int, list[ScoredMemory], str]] = []
        for i, item in enumerate(items):
            shown = _shown(item)
            if not shown:
                verdicts[i] = UpdateVerdict.add("no memory close enough to compare", self.name)
            elif (cached := self._cache.get(key := _key(item, shown))) is not None:
                self._cache.move_to_end(key)
                verdicts[i] = cached
            else:
                asks.append((i, shown, key))
        for start in range(0, len(asks), MAX_FACTS):
            batch = asks[start : start + MAX_FACTS]
            decided = await self._ask([items[i] for i, _, _ in batch], [shown for _, shown, _ in batch])
            missing = [n for n, verdict in enumerate(decided) if verdict is None]
            if missing:
                fallen = await self._fallback.judge([items[batch[n][0]] for n in missing])
                for n, fell in zip(missing, fallen, strict=True):
                    decided[n] = self._fell_back(fell, "did not decide this fact")
            for (i, _, key), answer in zip(batch, decided, strict=True):
                assert answer is not None
                verdicts[i] = answer
                if answer.judge == self.name:
                    self._remember(key, answer)
        return [v for v in verdicts if v is not None]

    async def _ask(
        self, items: Sequence[JudgeItem], shown: Sequence[Sequence[ScoredMemory]]
    ) -> list[UpdateVerdict | None]:
        labels: dict[str, str] = {}  # memory id → m<n>, each memory once for the whole batch
        lines: list[str] = []
        for hits in shown:
            for hit in hits:
                if hit.memory.id not in labels:
                    labels[hit.memory.id] = f"m{len(labels) + 1}"
                    lines.append(f"{labels[hit.memory.id]}: {_clip(hit.memory.content)}")
        facts = [f"f{n}" for n in range(1, len(items) + 1)]
        per_fact = {f: {labels[h.memory.id]: h.memory.id for h in hits} for f, hits in zip(facts, shown, strict=True)}
        prompt = get_prompt("capture.update").render(
            facts="\n".join(
                f"{f} ({item.candidate.category.value}): {_clip(item.candidate.content)}"
                for f, item in zip(facts, items, strict=True)
            ),
            memories="\n".join(lines),
        )

        async def call() -> dict[str, UpdateVerdict]:
            with role("update_judge"):
                reply = await self._model.complete_json([Message.user(prompt)], temperature=0.0, timeout=self.timeout_s)
            return parse_decisions(reply, facts, per_fact, self.name)

        try:
            decided = await with_retry(call, attempts=self.attempts)
        except ProviderError as exc:
            log.warning(
                "the update judge %s failed (%s); %s decides", self.name, type(exc).__name__, self._fallback.name
            )
            fallen = await self._fallback.judge(items)
            return [self._fell_back(v, f"failed ({type(exc).__name__})") for v in fallen]
        return [decided.get(f) for f in facts]

    def _fell_back(self, verdict: UpdateVerdict, why: str) -> UpdateVerdict:
        return UpdateVerdict(verdict.kind, verdict.memory_id, f"{self.name} {why}; {verdict.reason}", verdict.judge)

    def _remember(self, key: str, verdict: UpdateVerdict) -> None:
        self._cache[key] = verdict
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)

    async def aclose(self) -> None:
        self._cache.clear()
        if self._owns_model:
            await self._model.aclose()
        await self._fallback.aclose()
