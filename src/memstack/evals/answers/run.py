"""``memstack eval answers``: how well a reader model answers LoCoMo's questions from what memstack gives it.

For every question (in file order, at most ``limit``) and every mode:

- ``memstack``: the conversation is imported with ``ingest`` (as ``memstack eval locomo`` does); the question is
  the current turn of a new chat, and the reader gets the context a turn would assemble: the default agent, the
  memories and past-conversation excerpts ``recall`` returns for it (layer 6) and the recent sessions' lines
  (layer 7), asked the day after the last session;
- ``full``: the whole conversation, each session under its date, then the question;
- ``none``: the question alone.

The reader's answer is graded by the judge model against the gold answer (``memstack.prompts.ANSWER_JUDGE``, in the
style of the LLM-as-a-judge prompt the Mem0 paper published) and by token F1 and BLEU-1. Categories 1-4 (multi-hop,
temporal, open-domain, single-hop) make the overall figures, as in the published results; the adversarial category
5, whose questions the conversation does not answer, is reported apart (correct = the reader declines).

Every model call goes through the on-disk :class:`~memstack.evals.answers.cache.AnswerCache` (an interrupted run
resumes; a repeated one makes no call) and is retried with backoff on rate limits, timeouts and server errors.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memstack.errors import InputError, MalformedResponse
from memstack.evals.answers.cache import AnswerCache, call_key
from memstack.evals.answers.metrics import Graded, bleu1, score, token_f1
from memstack.evals.common import percentile
from memstack.evals.locomo import LocomoRun, _engine, _full_context, _message
from memstack.evals.locomo_data import Conversation, LocomoQuestion
from memstack.models import ChatModel, Message, get_model, with_retry
from memstack.prompts import ANSWER_FULL_CONTEXT, ANSWER_JUDGE, ANSWER_QUESTION, UNANSWERABLE_GOLD
from memstack.tokens import TokenCounter

__all__ = ["MODES", "AnswerRun", "Mode", "Prepared", "prepare", "run_answers"]

Mode = Literal["memstack", "full", "none"]
MODES: tuple[Mode, ...] = ("memstack", "full", "none")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ADVERSARIAL = 5


@dataclass(frozen=True, slots=True)
class AnswerRun:
    """``answer_model``/``judge_model``: model strings (``openai:gpt-4o-mini``, ``ollama:llama3.1``, …).
    ``limit``: questions at most, in file order (``None``: all). ``concurrency``: questions in flight at once.
    ``attempts``: tries per model call on retryable failures, with backoff from ``retry_delay_s``."""

    answer_model: str
    judge_model: str
    cache_dir: Path
    modes: tuple[Mode, ...] = MODES
    limit: int | None = None
    concurrency: int = 4
    attempts: int = 5
    retry_delay_s: float = 1.0
    locomo: LocomoRun = field(default_factory=LocomoRun)

    def __post_init__(self) -> None:
        if not self.modes or any(m not in MODES for m in self.modes):
            raise InputError(f"modes are {', '.join(MODES)}; got {', '.join(self.modes) or 'none'}")
        if self.limit is not None and self.limit < 1:
            raise InputError(f"limit must be at least 1, got {self.limit}")
        if self.concurrency < 1 or self.attempts < 1:
            raise InputError("concurrency and attempts must be at least 1")


@dataclass(frozen=True, slots=True)
class Prepared:
    """One question ready for the reader in one mode: the messages and their tokens."""

    mode: Mode
    conversation: str
    question: LocomoQuestion
    messages: tuple[Message, ...]
    context_tokens: int
    context_ms: float


def _question_message(question: LocomoQuestion) -> str:
    return ANSWER_QUESTION.render(question=question.text)


def _selected(
    conversations: Sequence[Conversation], limit: int | None
) -> list[tuple[Conversation, list[LocomoQuestion]]]:
    out: list[tuple[Conversation, list[LocomoQuestion]]] = []
    left = limit if limit is not None else sum(len(c.questions) for c in conversations)
    for conv in conversations:
        if left <= 0:
            break
        chosen = list(conv.questions[:left])
        left -= len(chosen)
        if chosen:
            out.append((conv, chosen))
    if not out:
        raise InputError("no question with evidence in the data; is this a LoCoMo file with qa[].evidence?")
    return out


def _plain(
    mode: Mode, conv: Conversation, questions: Sequence[LocomoQuestion], counter: TokenCounter
) -> list[Prepared]:
    out = []
    other = next((t.speaker for t in conv.turns if t.speaker != conv.user_speaker), "the assistant")
    history = ANSWER_FULL_CONTEXT.render(user=conv.user_speaker, other=other, conversation=_full_context(conv))
    for q in questions:
        started = time.perf_counter()
        ask = Message.user(_question_message(q))
        messages = (Message.system(history), ask) if mode == "full" else (ask,)
        tokens = sum(counter.count(m.content or "") for m in messages)
        out.append(Prepared(mode, conv.id, q, messages, tokens, (time.perf_counter() - started) * 1000))
    return out


async def _through_memstack(
    selected: Sequence[tuple[Conversation, list[LocomoQuestion]]], run: AnswerRun, log: Callable[[str], None]
) -> list[Prepared]:
    from memstack.context import SummaryLine, assemble, build_session, default_agent
    from memstack.context.assemble import ContextRequest
    from memstack.engine import Tuning
    from memstack.recall import layer_hits
    from memstack.types import UserRef

    agent = default_agent()
    out: list[Prepared] = []
    async with _engine(run.locomo, Tuning(recall=run.locomo.recall)) as ms:
        for conv, questions in selected:
            user = UserRef(conv.id, "locomo")
            log(f"importing {conv.id} ({len(conv.turns)} turns)")
            for session in conv.sessions:
                await ms.ingest(
                    user, f"D{session[0].session}", [_message(t) for t in session], user_speaker=conv.user_speaker,
                    tier=run.locomo.tier,
                )  # fmt: skip
            rows = await ms.store.archive.sessions(user, limit=5, with_line=True)
            lines = tuple(SummaryLine(r.session_id, r.line, r.ended_at or r.updated_at) for r in rows)
            for q in questions:
                started = time.perf_counter()
                items = await ms.recall(user, q.text, limit=agent.memory.top_k, at=conv.asked_at)
                meta = build_session({"timezone": "UTC"}, now=conv.asked_at)
                request = ContextRequest(
                    _question_message(q), agent, meta, memories=layer_hits(items), summaries=lines,
                    model=run.locomo.model,
                )  # fmt: skip
                context = await asyncio.to_thread(assemble, request)
                messages = tuple(Message.from_openai(m.to_dict()) for m in context.messages)
                elapsed = (time.perf_counter() - started) * 1000
                out.append(Prepared("memstack", conv.id, q, messages, context.tokens, elapsed))
    return out


async def prepare(
    conversations: Sequence[Conversation], run: AnswerRun, log: Callable[[str], None] = lambda _: None
) -> list[Prepared]:
    """The reader's messages for every selected question in every mode of ``run`` (no model is called)."""
    selected = _selected(conversations, run.limit)
    counter = TokenCounter(run.locomo.model)
    out: list[Prepared] = []
    for mode in run.modes:
        if mode == "memstack":
            out.extend(await _through_memstack(selected, run, log))
        else:
            for conv, questions in selected:
                out.extend(_plain(mode, conv, questions, counter))
    return out


class _Caller:
    """Model calls through the cache, retried with backoff; counts the calls actually made. The same call asked
    twice at once (the same verdict for two modes' identical answers) is made once."""

    def __init__(self, cache: AnswerCache, run: AnswerRun, models: dict[str, ChatModel]) -> None:
        self.cache = cache
        self.run = run
        self.models = models
        self.calls = 0
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}

    async def text(self, model: str, messages: Sequence[Message]) -> dict[str, Any]:
        key = call_key(model, messages)
        if (hit := self.cache.get(key)) is not None:
            return hit
        if (pending := self._pending.get(key)) is not None:
            self.cache.hits += 1
            return await asyncio.shield(pending)
        future = self._pending[key] = asyncio.get_running_loop().create_future()
        try:
            value = await self._call(key, model, messages)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a failure nobody else awaited is not logged as lost
            raise
        finally:
            del self._pending[key]
        future.set_result(value)
        return value

    async def _call(self, key: str, model: str, messages: Sequence[Message]) -> dict[str, Any]:
        chat = self.models[model]
        started = time.perf_counter()
        reply = await with_retry(
            lambda: chat.complete(messages, temperature=0.0, max_tokens=300),
            attempts=self.run.attempts,
            delay_s=self.run.retry_delay_s,
        )
        self.calls += 1
        usage = reply.usage
        value = {
            "text": reply.text,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            "prompt_tokens": usage.prompt_tokens if usage else None,
            "completion_tokens": usage.completion_tokens if usage else None,
        }
        self.cache.put(key, value)
        return value


def _label(text: str) -> bool:
    """The judge's verdict from its reply: the JSON ``label``, else the last of CORRECT/WRONG in the text."""
    from memstack.models import parse_json_object

    try:
        label = str(parse_json_object(text).get("label", "")).upper()
    except MalformedResponse:
        label = ""
    if label not in ("CORRECT", "WRONG"):
        upper = text.upper()
        label = "CORRECT" if upper.rfind("CORRECT") > upper.rfind("WRONG") else "WRONG"
    return label == "CORRECT"


async def _grade(item: Prepared, caller: _Caller) -> tuple[Graded, dict[str, Any]]:
    run = caller.run
    reply = await caller.text(run.answer_model, item.messages)
    answer = str(reply["text"]).strip()
    q = item.question
    gold = q.answer if q.category != ADVERSARIAL else UNANSWERABLE_GOLD
    judge_prompt = ANSWER_JUDGE.render(question=q.text, gold=gold, answer=answer or "(no answer)")
    verdict = await caller.text(run.judge_model, [Message.user(judge_prompt)])
    correct = _label(str(verdict["text"]))
    graded = Graded(
        category=q.category,
        correct=correct,
        f1=token_f1(answer, q.answer) if q.category != ADVERSARIAL else float(correct),
        bleu1=bleu1(answer, q.answer) if q.category != ADVERSARIAL else float(correct),
        context_tokens=item.context_tokens,
        latency_ms=float(reply["ms"]) + item.context_ms,
    )
    row = {
        "mode": item.mode, "conversation": item.conversation, "category": q.category, "question": q.text,
        "gold": q.answer, "answer": answer, "correct": correct, "context_tokens": item.context_tokens,
    }  # fmt: skip
    return graded, row


def _summary(graded: Sequence[Graded]) -> dict[str, Any]:
    main = [g for g in graded if g.category != ADVERSARIAL]
    latencies = [g.latency_ms for g in graded]
    return {
        "overall": score(main).as_dict(),
        "per_category": {
            str(c): {"name": CATEGORIES[c], **score(g for g in graded if g.category == c).as_dict()}
            for c in sorted({g.category for g in graded})
            if c != ADVERSARIAL
        },
        "adversarial": score(g for g in graded if g.category == ADVERSARIAL).as_dict(),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
    }


async def run_answers(
    prepared: Sequence[Prepared],
    run: AnswerRun,
    *,
    cache: AnswerCache,
    models: dict[str, ChatModel] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Ask and judge every prepared question; returns the result (the JSON contract) and one row per answer.
    ``models``: the chat models by model string (default: :func:`memstack.models.get_model` for each)."""
    own = models is None
    chosen: dict[str, ChatModel] = dict(models or {})
    for name in (run.answer_model, run.judge_model):
        if name not in chosen:
            chosen[name] = get_model(name)
    caller = _Caller(cache, run, chosen)
    gate = asyncio.Semaphore(run.concurrency)

    async def one(item: Prepared) -> tuple[Graded, dict[str, Any]]:
        async with gate:
            done = await _grade(item, caller)
        if progress is not None:
            progress(1)
        return done

    tasks = [asyncio.create_task(one(p)) for p in prepared]
    try:
        results = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:  # the first failure stops the run: no further call is sent
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    finally:
        if own:
            for model in chosen.values():
                closer = getattr(model, "aclose", None)
                if closer is not None:
                    await closer()
    by_mode: dict[str, list[Graded]] = {}
    for item, (graded, _) in zip(prepared, results, strict=True):
        by_mode.setdefault(item.mode, []).append(graded)
    result: dict[str, Any] = {
        "answer_model": run.answer_model,
        "judge_model": run.judge_model,
        "questions": len({(p.conversation, p.question.text) for p in prepared}),
        "modes": {mode: _summary(by_mode[mode]) for mode in run.modes if mode in by_mode},
        "model_calls": caller.calls,
        "cached_calls": cache.hits,
    }
    return result, [row for _, row in results]
