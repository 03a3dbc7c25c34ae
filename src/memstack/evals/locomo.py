"""``memstack eval locomo``: does retrieval find the turns a LoCoMo question is about?

For each conversation every session is ingested in order (one passage per speaker turn, timed at the session's
date, the session as its thread; a shared photo is its caption, as :mod:`memstack.evals.locomo_data` reads it),
then every question with evidence is asked at a time just after the last session. The ids (``D<session>:<turn>``)
of the top-k passages are compared with the gold evidence: hit@k = any evidence turn in the top k, recall@k =
fraction of evidence turns found.

Also reported: ``tokens_per_query``, the tokens of the retrieved context as it would be sent (the top-10 turns
with the turn before each, merged into windows under their session date), ``full_context_tokens`` (the whole
conversation rendered the same way, per conversation), and p50/p95 recall latency (query embedding + ranking).

The data is LoCoMo (CC BY-NC 4.0): pass its path with ``--data``, never ship it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench._fakes import need_fakes
from memstack.config import Config
from memstack.context import SummaryLine
from memstack.engine import AsyncMemstack, Tuning
from memstack.errors import InputError
from memstack.evals.locomo_data import Conversation, LocomoTurn, read_locomo
from memstack.recall import RecallSettings, layer_hits
from memstack.tokens import TokenCounter
from memstack.types import RecallItem, RecallKind, UserRef

__all__ = ["LocomoRun", "load_locomo", "run_locomo"]

KS = (5, 10)


def load_locomo(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo file (:func:`~memstack.evals.locomo_data.read_locomo`), each with the questions
    whose evidence names at least one of its turns."""
    out = []
    for conv in read_locomo(path):
        known = {t.id for t in conv.turns}
        questions = tuple(q for q in conv.questions if any(e in known for e in q.evidence))
        out.append(replace(conv, questions=questions))
    return out


@dataclass
class _Tally:
    questions: int = 0
    sums: dict[str, float] | None = None

    def add(self, found: dict[str, float]) -> None:
        self.questions += 1
        self.sums = self.sums or dict.fromkeys(found, 0.0)
        for key, value in found.items():
            self.sums[key] += value

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"questions": self.questions}
        for key, value in (self.sums or {}).items():
            out[key] = round(value / self.questions, 3)
        return out


def _score(top: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    gold = set(evidence)
    got = {k: gold.intersection(top[:k]) for k in KS}
    found = {f"hit@{k}": 1.0 if got[k] else 0.0 for k in KS}
    found.update({f"recall@{k}": len(got[k]) / len(gold) for k in KS})
    return found


@dataclass(frozen=True, slots=True)
class LocomoRun:
    """How to run the evaluation: the backend (a fresh SQLite file, or a fresh database on PostgreSQL: the given
    server, else an embedded one), the embedder, the ranking's settings, the chat model family whose tokenizer
    counts tokens, and the tier the imported user has (``premium``: no memory limit)."""

    backend: str = "sqlite"
    database_url: str | None = None
    embedder: str = "local:minilm"
    recall: RecallSettings | None = None
    model: str | None = None
    tier: str = "premium"


def _message(turn: LocomoTurn) -> dict[str, Any]:
    return {"speaker": turn.speaker, "content": turn.content, "at": turn.at}


def _full_context(conv: Conversation) -> str:
    """The whole conversation as one prompt would carry it: a dated header per session, one line per turn."""
    blocks = []
    for session in conv.sessions:
        lines = [f"[{session[0].at:%d %B %Y}, session {session[0].session}]"] + [t.render() for t in session]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _ranked_turns(items: Sequence[RecallItem], dia: dict[str, list[str]], k: int) -> list[str]:
    """The LoCoMo turn ids (``D<session>:<turn>``) of the items, best first, without repeats, at most ``k``: an
    archived message stands for the turn(s) it holds (consecutive turns of one speaker are one message), a memory
    for the user message(s) it was captured from."""
    out: dict[str, None] = {}
    for item in items:
        if item.kind is RecallKind.TURN:
            ids = dia.get(item.id, [])
        else:
            ids = [turn for turn_id in item.source_turn_ids for turn in dia.get(f"{turn_id}:user", [])]
        for turn in ids:
            out.setdefault(turn)
        if len(out) >= k:
            break
    return list(out)[:k]


class _Layers:
    """Tokens of the memory and summary layers the engine sends for a question: the assembled context with the
    recalled items (layer 6, as a turn places them) and the recent-session lines (layer 7), minus the same
    context without them."""

    def __init__(self, model: str | None) -> None:
        from memstack.context import default_agent

        self.agent = default_agent()
        self.model = model

    def tokens(self, question: str, items: Sequence[RecallItem], lines: Sequence[SummaryLine], at: datetime) -> int:
        from memstack.context import ContextRequest, assemble, build_session

        session = build_session({"timezone": "UTC"}, now=at)
        base = ContextRequest(question, self.agent, session, model=self.model)
        full = replace(base, memories=layer_hits(items), summaries=tuple(lines))
        return assemble(full).tokens - assemble(base).tokens


@asynccontextmanager
async def _engine(run: LocomoRun, tuning: Tuning) -> AsyncIterator[AsyncMemstack]:
    with tempfile.TemporaryDirectory(prefix="memstack-locomo-") as home:
        if run.backend == "sqlite":
            config = Config(home=Path(home), embedder=run.embedder)
            async with AsyncMemstack(config, tuning=tuning) as ms:
                yield ms
            return
        if run.backend != "postgres":
            raise InputError(f"unknown backend {run.backend!r}; use sqlite or postgres")
        if run.database_url is not None:
            async with AsyncMemstack(Config(home=Path(home), database_url=run.database_url, embedder=run.embedder),
                                     tuning=tuning) as ms:  # fmt: skip
                yield ms
            return
        need_fakes()
        from memstack_testing.postgres import EmbeddedPostgres

        with EmbeddedPostgres() as server:
            url = server.create_database("memstack_locomo")
            async with AsyncMemstack(Config(home=Path(home), database_url=url, embedder=run.embedder),
                                     tuning=tuning) as ms:  # fmt: skip
                yield ms


async def run_locomo(
    conversations: Sequence[Conversation],
    run: LocomoRun | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Evaluate through the public API; returns the overall result (the JSON contract) and one result per
    conversation. ``progress`` is called with the number of turns imported and of questions asked."""
    run = run or LocomoRun()
    counter = TokenCounter(run.model)
    layers = _Layers(run.model)
    overall, categories = _Tally(), dict[int, _Tally]()
    latencies: list[float] = []
    context_tokens: list[int] = []
    full_tokens: list[int] = []
    per_conversation: list[dict[str, Any]] = []
    top = max(KS)
    async with _engine(run, Tuning(recall=run.recall)) as ms:
        layer_k = max(top, layers.agent.memory.top_k)  # what a turn asks for: the agent's top_k
        for conv in conversations:
            user = UserRef(conv.id, "locomo")
            dia: dict[str, list[str]] = {}
            for session in conv.sessions:
                done = await ms.ingest(
                    user, f"D{session[0].session}", [_message(t) for t in session], user_speaker=conv.user_speaker,
                    tier=run.tier,
                )  # fmt: skip
                for message_id, turn in zip(done.message_ids, session, strict=True):
                    dia.setdefault(message_id, []).append(turn.id)
                if progress is not None:
                    progress(len(session))
            full_tokens.append(counter.count(_full_context(conv)))
            rows = await ms.store.archive.sessions(user, limit=5, with_line=True)
            lines = [SummaryLine(r.session_id, r.line, r.ended_at or r.updated_at) for r in rows]
            tally = _Tally()
            for question in conv.questions:
                started = time.perf_counter()
                items = await ms.recall(user, question.text, limit=layer_k, at=conv.asked_at)
                latencies.append((time.perf_counter() - started) * 1000)
                found = _score(_ranked_turns(items, dia, top), question.evidence)
                for t in (overall, tally, categories.setdefault(question.category, _Tally())):
                    t.add(found)
                context_tokens.append(layers.tokens(question.text, items, lines, conv.asked_at))
                if progress is not None:
                    progress(1)
            per_conversation.append({"conversation": conv.id, **tally.summary()})
    if not latencies:
        raise InputError("no question with evidence in the data; is this a LoCoMo file with qa[].evidence?")
    result = overall.summary()
    result["per_category"] = {str(c): categories[c].summary() for c in sorted(categories)}
    result["tokens_per_query"] = round(float(np.mean(context_tokens)), 1)
    result["full_context_tokens"] = round(float(np.mean(full_tokens)), 1)
    result["p50_ms"] = round(float(np.percentile(latencies, 50)), 2)
    result["p95_ms"] = round(float(np.percentile(latencies, 95)), 2)
    return result, per_conversation
