"""``memstack eval temporal``: "as of" retrieval and stale facts, on the generated suite of
:mod:`memstack.evals.temporal_data`.

Which path writes the memories: the **public API with explicit times**, not the capture pipeline. Each user's first
version of an attribute is ``add``-ed with its ``valid_from`` (or none), each later one is ``supersede``-d at the
time it began, and the distractors are ``add``-ed plainly. What this measures is the store and the ranking (does the
right memory come first, now and as of a past time, and does a superseded fact ever outrank its successor), not
whether the update judge notices the news: ``memstack eval updates`` measures that, and a judge that missed a move
would make this suite measure the judge instead. Every question is asked with ``recall`` (memories only, the ranking
the chat context uses: vector and full text, category weights, recency) or, with ``method="search"``, ``search``
(cosine alone); ``limit`` 10, ``as_of`` where the question is about the past. An answer is right when the expected
memory ranks first.

- ``current``: ``search(question)``; **stale**: an older version of the same attribute ranks above the current one
  (or comes back while the current one does not);
- ``as_of``: ``search(question, as_of=t)``; **wrong version**: another version of the attribute ranks above the
  one that held at ``t``;
- ``before`` / ``after`` ("Where did the user live before Lisbon?"), two calls: the named memory is found with
  ``list(text=value, include_deleted=True)`` (the one whose text ends with the value), then the attribute's
  question is asked ``as_of`` one second before its ``valid_from`` (before), or at its ``valid_to`` (after).

Beside it, the same lives written **add-only** (every version a plain current memory, no supersede, no interval:
what a store without update semantics keeps) and asked the current questions, for contrast: its stale rate is what
intervals and superseding remove.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import InputError
from memstack.evals.temporal_data import Question, SyntheticUser, generate
from memstack.types import Category, UserRef

__all__ = ["TemporalRun", "run_temporal"]

LIMIT = 10
METHODS = ("recall", "search")


@dataclass(frozen=True, slots=True)
class TemporalRun:
    users: int = 40
    seed: int = 7
    backend: str = "sqlite"
    database_url: str | None = None
    embedder: str = "local:minilm"
    method: str = "recall"  # recall (memories only: the chat context's ranking) or search (cosine alone)


@asynccontextmanager
async def _engine(run: TemporalRun) -> AsyncIterator[AsyncMemstack]:
    with tempfile.TemporaryDirectory(prefix="memstack-temporal-") as home:
        if run.backend == "sqlite" or run.database_url is not None:
            if run.backend not in ("sqlite", "postgres"):
                raise InputError(f"unknown backend {run.backend!r}; use sqlite or postgres")
            url = run.database_url if run.backend == "postgres" else None
            async with AsyncMemstack(Config(home=Path(home), database_url=url, embedder=run.embedder)) as ms:
                yield ms
            return
        if run.backend != "postgres":
            raise InputError(f"unknown backend {run.backend!r}; use sqlite or postgres")
        from memstack.bench._fakes import need_fakes

        need_fakes()
        from memstack_testing.postgres import EmbeddedPostgres

        with EmbeddedPostgres() as server:
            url = server.create_database("memstack_temporal")
            async with AsyncMemstack(Config(home=Path(home), database_url=url, embedder=run.embedder)) as ms:
                yield ms


async def _write(ms: AsyncMemstack, user: SyntheticUser, *, add_only: bool) -> None:
    ref = UserRef(user.id, "add-only" if add_only else "temporal")
    current: dict[str, str] = {}
    for v in user.versions:
        if add_only:
            await ms.add(ref, v.content, category=Category.FACT, force=True)
        elif v.attribute not in current:
            added = await ms.add(ref, v.content, category=Category.FACT, force=True, valid_from=v.start)
            current[v.attribute] = added.id
        else:
            await ms.supersede(ref, current[v.attribute], v.content, at=v.start)
    for text in user.distractors:
        await ms.add(ref, text, category=Category.FACT, force=True)


@dataclass(slots=True)
class _Tally:
    asked: int = 0
    right: int = 0
    stale: int = 0  # an other version of the attribute above the expected one

    def row(self) -> dict[str, Any]:
        return {
            "questions": self.asked,
            "top1": round(self.right / self.asked, 4) if self.asked else 0.0,
            "stale": self.stale,
            "stale_rate": round(self.stale / self.asked, 4) if self.asked else 0.0,
        }


def _judge(ranked: Sequence[str], question: Question, versions: set[str], tally: _Tally) -> None:
    tally.asked += 1
    if ranked and ranked[0] == question.expected:
        tally.right += 1
    position = ranked.index(question.expected) if question.expected in ranked else len(ranked)
    if any(text in versions and text != question.expected for text in ranked[:position]):
        tally.stale += 1


async def _ask(ms: AsyncMemstack, ref: UserRef, text: str, method: str, as_of: datetime | None) -> list[str]:
    if method == "recall":
        items = await ms.recall(ref, text, limit=LIMIT, kinds=["memory"], as_of=as_of)
        return [i.text for i in items]
    return [h.memory.content for h in await ms.search(ref, text, limit=LIMIT, as_of=as_of)]


async def _ranked(ms: AsyncMemstack, ref: UserRef, question: Question, method: str) -> list[str]:
    as_of = question.as_of
    if question.kind in ("before", "after"):
        assert question.anchor is not None
        found = await ms.list(ref, text=question.anchor, include_deleted=True, limit=20)
        named = [m for m in found if m.content.endswith(question.anchor)]
        if not named:
            return []
        edge = named[0].valid_from if question.kind == "before" else named[0].valid_to
        if edge is None:
            return []
        as_of = edge - timedelta(seconds=1) if question.kind == "before" else edge
    return await _ask(ms, ref, question.text, method, as_of)


async def run_temporal(run: TemporalRun, *, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Write the suite, ask every question; the JSON contract (see the command). ``progress`` is called with the
    number of users written and of questions asked."""
    if run.users < 1:
        raise InputError(f"users must be at least 1, got {run.users}")
    if run.method not in METHODS:
        raise InputError(f"unknown method {run.method!r}; use recall or search")
    users, questions = generate(run.users, run.seed)
    versions = {(u.id, v.attribute): {x.content for x in u.versions if x.attribute == v.attribute}
                for u in users for v in u.versions}  # fmt: skip
    by_kind: dict[str, _Tally] = {}
    add_only = _Tally()
    started = time.perf_counter()
    async with _engine(run) as ms:
        for user in users:
            await _write(ms, user, add_only=False)
            await _write(ms, user, add_only=True)
            if progress is not None:
                progress(1)
        latencies: list[float] = []
        for q in questions:
            began = time.perf_counter()
            ranked = await _ranked(ms, UserRef(q.user, "temporal"), q, run.method)
            latencies.append((time.perf_counter() - began) * 1000)
            _judge(ranked, q, versions[(q.user, q.attribute)], by_kind.setdefault(q.kind, _Tally()))
            if q.kind == "current":
                plain = await _ask(ms, UserRef(q.user, "add-only"), q.text, run.method, None)
                _judge(plain, q, versions[(q.user, q.attribute)], add_only)
            if progress is not None:
                progress(1)
    kinds = {k: by_kind[k].row() for k in ("current", "as_of", "before", "after") if k in by_kind}
    total = sum(t.asked for t in by_kind.values())
    latencies.sort()
    return {
        "users": run.users,
        "seed": run.seed,
        "questions": total,
        "memories": sum(len(u.versions) + len(u.distractors) for u in users),
        "kinds": dict(Counter(q.kind for q in questions)),
        "current_top1": kinds.get("current", {}).get("top1", 0.0),
        "as_of_top1": kinds.get("as_of", {}).get("top1", 0.0),
        "ordering_top1": round(
            sum(by_kind[k].right for k in ("before", "after") if k in by_kind)
            / max(1, sum(by_kind[k].asked for k in ("before", "after") if k in by_kind)),
            4,
        ),
        "stale_rate": kinds.get("current", {}).get("stale_rate", 0.0),
        "per_kind": kinds,
        "add_only": add_only.row(),
        "backend": run.backend,
        "embedder": run.embedder,
        "method": run.method,
        "writes": "public API (add with valid_from, supersede at the change's time)",
        "p50_ms": round(latencies[len(latencies) // 2], 2) if latencies else 0.0,
        "seconds": round(time.perf_counter() - started, 1),
    }
