"""The LLM classifier: seed 02's prompt contract on any OpenAI-compatible chat model.

The model gets the ``capture.classify`` prompt (today's date, a little recent context, the message) and answers
``{"memories": [{"content", "category", "confidence", "explicit"}]}``. Candidates under ``min_confidence`` (0.7)
are dropped. Times stay in the user's words, with the day they were said written beside any that count from it
(:func:`memstack.dates.anchor`, as the offline classifier writes them); schedule memories get an expiry.

Failures never reach the chat: a malformed answer, a timeout or an HTTP 5xx is retried once, then the message is
given up, a :class:`~memstack.capture.base.ClassifierFailure` is appended to ``failures`` (and passed to
``on_failure``), and the result is an empty list.

Whether a candidate replaces one of the user's memories is another role, chosen by its own setting
(:mod:`memstack.capture.judge`; unset, it follows this classifier's model string).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from memstack.capture.base import MIN_CONFIDENCE, ClassifierFailure, ClassifyContext
from memstack.dates import anchor, expiry_for, find_dates, stated_start
from memstack.errors import InputError, MalformedResponse, ProviderError
from memstack.models import ChatModel, Message, get_model, with_retry
from memstack.observe import role
from memstack.prompts import get_prompt
from memstack.types import MAX_CONTENT_CHARS, Candidate, Category

__all__ = ["LLMClassifier", "parse_memories"]

log = logging.getLogger(__name__)


def parse_memories(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``memories`` list of a reply; ``MalformedResponse`` if the reply does not have that shape."""
    memories = data.get("memories")
    if not isinstance(memories, list):
        raise MalformedResponse('the classifier reply has no "memories" list; the prompt asks for one', body=str(data))
    return [m for m in memories if isinstance(m, dict)]


def _candidate(item: dict[str, Any], at: datetime) -> Candidate | None:
    """One reply item as a candidate, or ``None`` when it is unusable (empty, wrong types)."""
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        return None
    try:
        confidence = float(item.get("confidence", 0.0))
    except (TypeError, ValueError):
        return None
    try:
        category = Category.parse(str(item.get("category", "general")))
    except InputError:
        category = Category.GENERAL
    text, mentions = anchor(content.strip(), at)
    expires = expiry_for(find_dates(content, at), at) if category is Category.SCHEDULE else None
    return Candidate(
        content=text[:MAX_CONTENT_CHARS],
        category=category,
        confidence=min(1.0, max(0.0, confidence)),
        explicit=item.get("explicit") is True,
        observed_at=at,
        expires_at=expires,
        evidence=content.strip(),
        valid_from=stated_start(mentions, at),
    )


class LLMClassifier:
    """Classifies with a chat model; ``timeout_s`` bounds each attempt, ``attempts`` is 2 (one retry)."""

    def __init__(
        self,
        model: ChatModel,
        *,
        min_confidence: float = MIN_CONFIDENCE,
        timeout_s: float = 8.0,
        attempts: int = 2,
        on_failure: Callable[[ClassifierFailure], None] | None = None,
        keep_failures: int = 100,
        owns_model: bool = False,
    ) -> None:
        self._model = model
        self._owns_model = owns_model
        self.min_confidence = min_confidence
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.on_failure = on_failure
        self.failures: deque[ClassifierFailure] = deque(maxlen=keep_failures)

    @classmethod
    def from_spec(cls, spec: str, **options: Any) -> LLMClassifier:
        """``openai:gpt-4o-mini`` etc.; ``base_url``/``api_key`` options go to the model, the rest here."""
        model_options = {k: options.pop(k) for k in ("base_url", "api_key") if k in options}
        return cls(get_model(spec, **model_options), owns_model=True, **options)

    @property
    def name(self) -> str:
        return f"llm:{self._model.name}"

    def _messages(self, message: str, at: datetime, context: ClassifyContext | None) -> list[Message]:
        recent = context.recent[-4:] if context else ()
        lines = "\n".join(f"{role}: {text[:500]}" for role, text in recent) or "(none)"
        prompt = get_prompt("capture.classify").render(
            today=f"{at:%A, %d %B %Y}", context=lines, message=message[:4000]
        )
        return [Message.user(prompt)]

    async def classify(self, message: str, *, at: datetime, context: ClassifyContext | None = None) -> list[Candidate]:
        messages = self._messages(message, at, context)
        attempts = 0

        async def call() -> list[dict[str, Any]]:
            nonlocal attempts
            attempts += 1
            with role("classifier"):
                data = await self._model.complete_json(messages, temperature=0.0, timeout=self.timeout_s)
            return parse_memories(data)

        try:
            items = await with_retry(call, attempts=self.attempts)
        except ProviderError as exc:
            self._record(at, exc, attempts)
            return []
        out = [c for item in items if (c := _candidate(item, at)) is not None and c.confidence >= self.min_confidence]
        return sorted(out, key=lambda c: -c.confidence)

    def _record(self, at: datetime, exc: ProviderError, attempts: int) -> None:
        failure = ClassifierFailure(self.name, at, type(exc).__name__, str(exc)[:500], attempts)
        self.failures.append(failure)
        log.warning("memory classifier gave up after %d attempt(s): %s: %s", attempts, failure.error, failure.detail)
        if self.on_failure is not None:
            self.on_failure(failure)

    async def aclose(self) -> None:
        if self._owns_model:
            await self._model.aclose()
