"""``memstack bench session-memory``: the offline session pipeline on LoCoMo-format conversations.

    memstack bench session-memory --data locomo-dev.json [--json]

Each session of each conversation (read by :mod:`memstack.evals.locomo_data`, a shared photo as its caption) is
replayed as a session of memstack: consecutive (speaker A, speaker B) messages form one exchange (A plays the user),
run through routing, the offline summarizer, the failure policy and diff apply, with consolidation on the
configured cadence. Printed (the last line is one JSON object with ``--json``):

* ``ms_per_turn_p50`` / ``ms_per_turn_p99`` — phase-2 time of one exchange on this machine;
* ``routes`` — how many exchanges took each route; ``max_user_summary_words`` / ``max_assistant_summary_words``;
* ``facts_per_session`` — base-truth size at the end of a session (mean); ``warnings`` by kind;
* ``observation_coverage`` — share of LoCoMo's gold per-session observations about speaker A whose content words
  (names and framing removed) are at least half present in: the base truth, the turn log, both, and the raw
  transcript (the ceiling of this word-overlap measure);
* ``memory_to_transcript_tokens`` — tokens of base truth + turn log over tokens of the transcript.

With ``--store sqlite`` or ``--store postgres`` (an embedded server, or the scratch database
``MEMSTACK_DATABASE_URL`` names) the same exchanges go through the :class:`~memstack.session.service.SessionService`
on a fresh store instead, one memstack session per LoCoMo session, and it prints what durability costs:
``begin_ms`` (lock + reading the state) and ``finish_ms`` (durable record, phase 2, commit) per turn, p50 / p99, and
``search_ms`` for a full-text search of the archive.

The data is read from ``--data``; nothing of it is kept after the run (the store is a temporary one).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstack.bench._fakes import need_fakes
from memstack.evals.locomo_data import Conversation, LocomoTurn, read_locomo
from memstack.session.consolidate import consolidate_base_truth, consolidation_due
from memstack.session.extractive import OfflineSummarizer
from memstack.session.policy import SummaryRunner
from memstack.session.settings import SessionSettings
from memstack.session.text import content_words, count_words
from memstack.text import stem, words
from memstack.tokens import TokenCounter
from memstack.types import Exchange, Fact, TurnSummary, UserRef

__all__ = ["run_bench", "run_service_bench"]


def _exchanges(turns: Sequence[LocomoTurn], speaker_a: str) -> list[Exchange]:
    out: list[Exchange] = []
    pending: list[str] = []
    replies: list[str] = []
    for turn in turns:
        text = turn.content.strip()
        if turn.speaker == speaker_a:
            if replies:
                out.append(Exchange(len(out) + 1, " ".join(pending), " ".join(replies)))
                pending, replies = [], []
            pending.append(text)
        elif pending:
            replies.append(text)
    if pending:
        out.append(Exchange(len(out) + 1, " ".join(pending), " ".join(replies) or "(no reply)"))
    return out


def _covered(observation: str, memory: set[str], names: set[str]) -> bool:
    words = content_words(observation, framing=True) - names
    return bool(words) and len(words & memory) / len(words) >= 0.5


def _percentiles(name: str, values: Sequence[float]) -> dict[str, float | None]:
    ordered = sorted(values)
    if not ordered:
        return {f"{name}_p50": None, f"{name}_p99": None}
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {f"{name}_p50": round(statistics.median(ordered), 3), f"{name}_p99": round(p99, 3)}


async def run_service_bench(
    data: Path,
    *,
    backend: str = "sqlite",
    database_url: str | None = None,
    settings: SessionSettings | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Every exchange through the session service on a fresh store: a temporary SQLite file, or (``postgres``) a
    database on an embedded PostgreSQL server, or the database at ``database_url``."""
    if database_url is not None or backend == "sqlite":
        return await _service_bench(data, database_url, settings or SessionSettings(), limit)
    need_fakes()
    from memstack_testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as server:
        return await _service_bench(data, server.create_database(), settings or SessionSettings(), limit)


async def _service_bench(data: Path, database_url: str | None, s: SessionSettings, limit: int | None) -> dict[str, Any]:
    from memstack.session.service import SessionService

    conversations = read_locomo(data)[:limit]
    with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
        if database_url is None:
            from memstack.store.sqlite import SQLiteStore

            store: Any = await SQLiteStore.open(Path(tmp) / "bench.db", dim=8, embedder="bench:none")
        else:
            from memstack.store.postgres import PostgresStore

            store = await PostgresStore.open(database_url, dim=8, embedder="bench:none")
        try:
            service = SessionService(store, OfflineSummarizer(s), s)
            user = UserRef(f"bench-{time.time_ns()}")
            begin: list[float] = []
            finish: list[float] = []
            queries: list[str] = []
            for n, conv in enumerate(conversations):
                for turns in conv.sessions:
                    for ex in _exchanges(turns, conv.user_speaker):
                        t0 = time.perf_counter()
                        handle = await service.begin_turn(user, f"locomo-{n}-session_{turns[0].session}")
                        t1 = time.perf_counter()
                        await service.finish_turn(handle, ex.user, ex.assistant)
                        t2 = time.perf_counter()
                        begin.append((t1 - t0) * 1000)
                        finish.append((t2 - t1) * 1000)
                        if len(queries) < 200 and ex.turn % 3 == 0:
                            queries.append(" ".join(ex.user.split()[:6]))
            search: list[float] = []
            for query in queries:
                t0 = time.perf_counter()
                await store.archive.search(user, query, 10)
                search.append((time.perf_counter() - t0) * 1000)
            await service.drain(10)
        finally:
            await store.close()
    return {
        "store": "sqlite" if database_url is None else "postgres",
        "conversations": len(conversations),
        "turns": len(finish),
        **_percentiles("begin_ms", begin),
        **_percentiles("finish_ms", finish),
        "searches": len(search),
        **_percentiles("search_ms", search),
        "summarizer": f"offline:extractive ({s.window}-message window)",
    }


async def run_bench(data: Path, settings: SessionSettings | None = None, limit: int | None = None) -> dict[str, Any]:
    s = settings or SessionSettings()
    conversations: list[Conversation] = read_locomo(data)
    summarizer = OfflineSummarizer(s)
    runner = SummaryRunner(summarizer, s)
    counter = TokenCounter()
    times: list[float] = []
    routes: Counter[str] = Counter()
    warnings: Counter[str] = Counter()
    max_words = [0, 0]
    facts_per_session: list[int] = []
    hits = Counter[str]()
    observations = 0
    memory_tokens = transcript_tokens = 0
    for conv in conversations[:limit]:
        speaker_a = conv.user_speaker
        names = {stem(w) for w in words(f"{speaker_a} {conv.other_speaker}")}
        for turns in conv.sessions:
            base_truth: tuple[Fact, ...] = ()
            log: list[TurnSummary] = []
            last_consolidated = 0
            for ex in _exchanges(turns, speaker_a):
                started = time.perf_counter()
                result = await runner.run(ex, base_truth)
                base_truth = result.base_truth
                if consolidation_due(ex.turn, last_consolidated, len(base_truth), s):
                    base_truth = (await consolidate_base_truth(summarizer, base_truth, s)).facts
                    last_consolidated = ex.turn
                times.append((time.perf_counter() - started) * 1000)
                routes[result.route.route.value] += 1
                warnings.update(w.kind.value for w in result.warnings)
                log.append(result.summary)
                max_words[0] = max(max_words[0], count_words(result.summary.user_summary))
                max_words[1] = max(max_words[1], count_words(result.summary.assistant_summary))
            facts_per_session.append(len(base_truth))
            truth_text = "\n".join(f.text for f in base_truth)
            log_text = "\n".join(f"{t.user_summary}\n{t.assistant_summary}" for t in log)
            raw_text = "\n".join(t.content for t in turns)
            memory_tokens += counter.count(truth_text) + counter.count(log_text)
            transcript_tokens += counter.count(raw_text)
            pools = {
                "base_truth": content_words(truth_text),
                "turn_log": content_words(log_text),
                "both": content_words(truth_text + "\n" + log_text),
                "transcript": content_words(raw_text),
            }
            session = turns[0].session
            for item in conv.observations:
                if item.session != session or item.speaker != speaker_a:
                    continue
                observations += 1
                for pool, said in pools.items():
                    hits[pool] += _covered(item.text, said, names)
    ordered = sorted(times)
    return {
        "conversations": len(conversations[:limit]),
        "sessions": len(facts_per_session),
        "exchanges": len(times),
        "ms_per_turn_p50": round(statistics.median(ordered), 3) if ordered else None,
        "ms_per_turn_p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3) if ordered else None,
        "routes": dict(routes),
        "max_user_summary_words": max_words[0],
        "max_assistant_summary_words": max_words[1],
        "facts_per_session": round(statistics.mean(facts_per_session), 2) if facts_per_session else 0,
        "warnings": dict(warnings),
        "observations": observations,
        "observation_coverage": {k: round(hits[k] / observations, 3) if observations else None for k in hits},
        "memory_to_transcript_tokens": round(memory_tokens / transcript_tokens, 3) if transcript_tokens else None,
        "summarizer": summarizer.name,
    }
