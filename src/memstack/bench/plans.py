"""``memstack bench plans``: what a real workload sends to PostgreSQL, and how the server plans each statement.

The workload (:func:`workload`, also what ``tests/store/test_shard_keys.py`` checks) is what users do: memories
added, searched, listed, edited, forgotten and restored, chat turns with their phase 2 and detection, contexts read
back, the archive searched, a session ended, a conversation imported, recall. It runs for a few users on top of
``users`` x ``per_user`` seeded memories, on an embedded PostgreSQL with ``pg_stat_statements`` (or on
``MEMSTACK_DATABASE_URL``, whose server must preload it). Then, for the statements called most, it prints how often
each ran, its mean time, whether it names the user (``tenant`` and ``user_id``: one shard on a cluster sharded by
user, see docs/scaling.md) and its plan (``EXPLAIN (GENERIC_PLAN)``, the plan for any parameters).

The last line is one JSON object: ``statements`` (query, calls, mean_ms, scoped, plan) and ``unscoped``.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench._fakes import need_fakes
from memstack.config import Config
from memstack.types import ArchivedTurn, NewMemory, TurnCommit, TurnStatus, TurnSummary, UserRef

__all__ = ["USER_TABLES", "PlansConfig", "names_the_user", "run_plans", "touches_user_data", "workload"]

#: Tables whose rows belong to one (tenant, user).
USER_TABLES = frozenset(
    {
        "memories",
        "memory_history",
        "memory_ann_indexes",
        "sessions",
        "session_turns",
        "session_artifacts",
        "session_snapshots",
        "session_leases",
        "archive_vectors",
        "archive_stats",
        "context_manifests",
        "capture_drops",
        "hidden_items",
    }
)

_DML = ("SELECT", "WITH", "UPDATE", "INSERT", "DELETE")
_TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(\w+)", re.IGNORECASE)


def touches_user_data(query: str) -> bool:
    return any(name in USER_TABLES for name in _TABLE.findall(query))


def names_the_user(query: str) -> bool:
    return bool(re.search(r"\btenant\b", query)) and bool(re.search(r"\buser_id\b", query))


@dataclass(frozen=True, slots=True)
class PlansConfig:
    users: int = 200
    per_user: int = 50
    top: int = 25


async def workload(ms: Any, user: UserRef, *, now: datetime) -> None:
    """One user's day with memstack, through the public API (the engine ``ms`` is open on PostgreSQL)."""
    memory = await ms.add(user, "I keep bees on my roof", category="fact")
    await ms.add(user, "My exam is on Friday at 9am", category="schedule")
    await ms.search(user, "any animals?", limit=3)
    await ms.list(user, text="bees")
    await ms.edit(user, memory.id, content="I keep two hives of bees on my roof")
    await ms.history(user, memory.id)
    await ms.forget(user, memory.id)
    await ms.restore(user, memory.id)
    await ms.usage(user)
    first = await ms.chat(user, "I moved to Porto last week.")
    second = await ms.chat(user, "What should I see there?", session_id=first.session_id)
    await ms.wait_idle()
    if second.context_id is not None:
        await ms.store.contexts.get(user.tenant, second.context_id, user_id=user.user_id)
    await ms.store.contexts.recent(user, session_id=first.session_id)
    await ms.store.archive.search(user, "Porto", 5)
    await ms.store.archive.sessions(user)
    await ms.store.archive.artifacts(user, first.session_id)
    await ms.store.archive.snapshots(user, first.session_id)
    await ms.end_session(user, first.session_id)
    messages = [
        {"role": "user", "content": "I started a pottery class.", "at": now},
        {"role": "assistant", "content": "How is it going?", "at": now + timedelta(minutes=1)},
    ]
    await ms.ingest(user, "imported", messages)
    await ms.recall(user, "what did I say about pottery?", limit=5)
    await ms.delete(user, (await ms.add(user, "temporary note", category="general")).id)
    await ms.wait_idle()


async def _seed(store: Any, dim: int, cfg: PlansConfig) -> None:
    """Other users' rows in every per-user table, so the plans are those of tables many users share."""
    rng = np.random.default_rng(0)
    at = datetime(2025, 1, 1, tzinfo=UTC)
    for n in range(cfg.users):
        user = UserRef(f"seeded-{n}", tenant="acme")
        vectors = rng.standard_normal((cfg.per_user, dim)).astype(np.float32)
        await store.memories.add_many(
            user, [NewMemory(f"seeded memory {i} of user {n}") for i in range(cfg.per_user)], vectors
        )
        held = await store.sessions.acquire(user, "seeded")
        try:
            state = await store.sessions.open(user, "seeded")
            for turn in (1, 2):
                await store.sessions.record(
                    user, ArchivedTurn("seeded", turn, f"message {turn}", f"reply {turn}", at), lease=held.lease
                )
                await store.sessions.commit(
                    user,
                    "seeded",
                    TurnCommit(turn, TurnStatus.SUMMARIZED, TurnSummary(turn, "asked", "answered"), (), state.version),
                    lease=held.lease,
                )
                state = await store.sessions.open(user, "seeded")
        finally:
            await held.release()


@asynccontextmanager
async def _server(database_url: str | None) -> AsyncIterator[str]:
    if database_url is not None:
        yield database_url
        return
    need_fakes()
    from memstack_testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres(settings={"shared_preload_libraries": "pg_stat_statements"}) as server:
        yield server.create_database("memstack_plans")


async def run_plans(cfg: PlansConfig, *, database_url: str | None = None) -> dict[str, Any]:
    import psycopg

    from memstack.engine import AsyncMemstack

    async with _server(database_url) as url:
        with tempfile.TemporaryDirectory(prefix="memstack-bench-plans-") as home:
            async with AsyncMemstack(Config(home=Path(home), database_url=url)) as ms:
                await _seed(ms.store, ms.embedder.dim, cfg)
                async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                    await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                    await conn.execute("ANALYZE")
                    await conn.execute("SELECT pg_stat_statements_reset()")
                now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
                for who in ("alice", "bob", "carol"):
                    await workload(ms, UserRef(who, tenant="acme"), now=now)
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            rows = await (
                await conn.execute(
                    "SELECT query, calls, mean_exec_time FROM pg_stat_statements WHERE dbid = "
                    "(SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC"
                )
            ).fetchall()
            statements = []
            for query, calls, mean in rows:
                text = str(query)
                if not touches_user_data(text) or not text.lstrip().upper().startswith(_DML):
                    continue
                try:
                    plan = await (await conn.execute(f"EXPLAIN (GENERIC_PLAN) {text}".encode())).fetchall()
                    shown = "\n".join(str(r[0]) for r in plan)
                except psycopg.Error as exc:
                    shown = f"(no generic plan: {str(exc).splitlines()[0]})"
                statements.append(
                    {
                        "query": " ".join(text.split()),
                        "calls": int(calls),
                        "mean_ms": round(float(mean), 3),
                        "scoped": names_the_user(text),
                        "plan": shown,
                    }
                )
    top = statements[: cfg.top]
    return {"statements": top, "unscoped": sum(not s["scoped"] for s in statements)}
