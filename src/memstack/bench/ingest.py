"""``memstack bench ingest``: importing past conversations (``AsyncMemstack.ingest``) with offline memory capture.

The conversations are LoCoMo-sized: ``conversations`` synthetic ones of LoCoMo's size and shape
(:func:`memstack.bench._talk.synthetic_conversations`: about 600 turns over 19-32 dated sessions each, two speakers),
or the first ``conversations`` of a LoCoMo file passed with ``data`` (``sessions``: only the first sessions of
each, for a short run). Each conversation is its own user (LoCoMo's
first speaker, the other speaker's turns being the assistant side), imported one session at a time in order, as
``memstack eval locomo`` does; memory capture runs on the user's messages with the offline classifier and update
judge (no model is configured), so the figure is memstack's own work: archiving, summarizing, capture, embedding
every message for recall. The store is SQLite in a temporary directory, or PostgreSQL (``backend="postgres"``).

Timed, on one clock: every import, then the wait for whatever background work the imports left (so nothing is
deferred outside the figure). ``turns`` are LoCoMo's turns (one message of one speaker; consecutive messages of a
speaker become one side of an exchange), ``exchanges`` the archived exchanges, ``memories`` the memories capture
created. ``turns_per_s``, ``exchanges_per_s``, ``memories_per_s``; ``session_p50_ms`` / ``session_p99_ms`` per
imported session.

Cold and warm: the engine's first import (``cold_session_ms``: one session of a conversation of its own, loading the
models) is timed apart and kept out of the rates; every timed conversation is a new user (nothing of theirs cached).

The limit: ``limit_embed_per_s`` is the embedder alone embedding the texts of every timed turn, in one batched call,
after the imports (an import embeds each message at least once, so it cannot import turns faster);
``turns_per_s_over_limit`` is the ratio. ``load_avg_start``, ``load_avg_end``: the machine's load.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstack.bench._measure import Load, check_backend, database, embed_batch_rate, ms_figures, ratio, warm_embedder
from memstack.bench._talk import synthetic_conversations
from memstack.config import Config
from memstack.errors import InputError
from memstack.evals.locomo_data import Conversation, LocomoTurn, read_locomo
from memstack.types import UpdateAction, UserRef

__all__ = ["IngestBenchConfig", "run_ingest_bench"]

_TENANT = "bench-ingest"


@dataclass(frozen=True, slots=True)
class IngestBenchConfig:
    backend: str = "sqlite"
    conversations: int = 10
    embedder: str = "local:minilm"
    seed: int = 0
    data: Path | None = None  # a LoCoMo file instead of synthetic conversations
    sessions: int | None = None  # only the first sessions of each conversation (None: all)

    def __post_init__(self) -> None:
        if self.conversations < 1 or (self.sessions is not None and self.sessions < 1):
            raise InputError("--conversations and --sessions must be at least 1")
        check_backend(self.backend)


def _messages(session: list[LocomoTurn]) -> list[dict[str, Any]]:
    return [{"speaker": t.speaker, "content": t.content, "at": t.at} for t in session]


async def run_ingest_bench(cfg: IngestBenchConfig, *, database_url: str | None = None) -> dict[str, Any]:
    from memstack.engine import AsyncMemstack

    load = Load()
    conversations: list[Conversation] = (
        read_locomo(cfg.data)[: cfg.conversations]
        if cfg.data is not None
        else synthetic_conversations(cfg.conversations, cfg.seed)
    )
    warmup = synthetic_conversations(1, cfg.seed + 1_000_003)[0]
    sessions: list[float] = []
    turns = exchanges = memories = 0
    with tempfile.TemporaryDirectory(prefix="memstack-bench-ingest-") as home:
        async with database(cfg.backend, database_url, "memstack_bench_ingest") as url:
            config = Config(home=Path(home), embedder=cfg.embedder, database_url=url)  # offline capture
            async with AsyncMemstack(config) as ms:
                began = time.perf_counter()
                first = warmup.sessions[0]
                await ms.ingest(
                    UserRef("warmup", _TENANT), "D1", _messages(first), user_speaker=warmup.user_speaker
                )  # the engine's first import: models load; kept out of the rates
                await ms.wait_idle()
                cold_ms = (time.perf_counter() - began) * 1000
                started = time.perf_counter()
                for conv in conversations:
                    user = UserRef(conv.id, _TENANT)
                    for session in conv.sessions[: cfg.sessions]:
                        t0 = time.perf_counter()
                        done = await ms.ingest(
                            user, f"D{session[0].session}", _messages(session), user_speaker=conv.user_speaker
                        )
                        sessions.append((time.perf_counter() - t0) * 1000)
                        turns += len(session)
                        exchanges += len(done.turns)
                        memories += sum(1 for u in done.memory_updates if u.action is UpdateAction.CREATED)
                await ms.wait_idle()
                seconds = time.perf_counter() - started
                await warm_embedder(ms.embedder)
                texts = [t.content for c in conversations for s in c.sessions[: cfg.sessions] for t in s]
                limit = await embed_batch_rate(ms.embedder, texts)
    turns_per_s = turns / seconds
    return {
        "backend": cfg.backend,
        "data": cfg.data.name if cfg.data is not None else "synthetic",
        "embedder": cfg.embedder,
        "conversations": len(conversations),
        "sessions": len(sessions),
        "turns": turns,
        "exchanges": exchanges,
        "memories": memories,
        "seconds": round(seconds, 3),
        "turns_per_s": round(turns_per_s, 2),
        "exchanges_per_s": round(exchanges / seconds, 2),
        "memories_per_s": round(memories / seconds, 2),
        **ms_figures("session_", sessions),
        "cold_session_ms": round(cold_ms, 2),
        "limit_embed_per_s": round(limit, 2),
        "turns_per_s_over_limit": ratio(turns_per_s, limit),
        **load.as_json(),
    }
