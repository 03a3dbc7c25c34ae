"""Every statement on a user's data names the user: the condition for sharding by user (docs/scaling.md).

A real workload (memories managed, chat turns with phase 2 and detection, recall, an import, a session ended,
contexts read back) runs on PostgreSQL with ``pg_stat_statements`` on; then every statement the store sent that
touches a per-user table must filter by ``tenant`` and ``user_id`` (so on a cluster sharded by user it goes to one
shard). The few statements that are cross-user by design are listed here, each with the reason; a new one fails
this test until it is either scoped or listed (and docs/scaling.md says how it runs on a sharded cluster).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import psycopg

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.types import UserRef

#: Tables whose rows belong to one (tenant, user).
USER_TABLES = (
    "memories",
    "memory_history",
    "memory_ann_indexes",
    "sessions",
    "session_turns",
    "session_artifacts",
    "session_snapshots",
    "session_leases",
    "archive_vectors",
    "context_manifests",
)

#: Statements that read across users on purpose: (a fragment that identifies it, why).
CROSS_USER = (
    ("WHERE t.status IN ('pending', 'unsummarized') ORDER BY", "startup/periodic scan for turns left unsummarized"),
    ("WHERE NOT EXISTS (SELECT 1 FROM archive_vectors v WHERE v.turn_seq = t.seq)", "startup backfill of vectors"),
    ("memstack_migrations", "schema migrations"),
    ("pg_stat_statements", "this test"),
)

_TABLE = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(\w+)", re.IGNORECASE)


def _touches_user_data(query: str) -> bool:
    return any(name in USER_TABLES for name in _TABLE.findall(query))


def _scoped(query: str) -> bool:
    return bool(re.search(r"\btenant\b", query)) and bool(re.search(r"\buser_id\b", query))


async def test_every_statement_on_user_data_names_the_user(postgres_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("SELECT pg_stat_statements_reset()")
    alice, bob = UserRef("alice", tenant="acme"), UserRef("bob", tenant="acme")
    now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    async with AsyncMemstack(Config(home=tmp_path, database_url=postgres_url)) as ms:
        for user in (alice, bob):
            memory = await ms.add(user, "I keep bees on my roof", category="fact")
            await ms.add(user, "My exam is on Friday at 9am", category="schedule")
            await ms.search(user, "any animals?", k=3)
            await ms.list(user, text="bees")
            await ms.edit(user, memory.id, content="I keep two hives of bees on my roof")
            await ms.history(user, memory.id)
            await ms.forget(user, memory.id)
            await ms.restore(user, memory.id)
            await ms.usage(user)
            first = await ms.chat(user, "I moved to Porto last week.")
            second = await ms.chat(user, "What should I see there?", session_id=first.session_id)
            await ms.wait_idle()
            assert second.context_id is not None
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
            await ms.recall(user, "what did I say about pottery?", k=5)
            await ms.delete(user, (await ms.add(user, "temporary note", category="general")).id)
            await ms.wait_idle()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
            "WHERE datname = current_database())"
        ).fetchall()
    queries = [str(r[0]) for r in rows]
    assert len(queries) > 40  # the workload ran through the store
    unscoped = [
        q
        for q in queries
        if _touches_user_data(q)
        and not _scoped(q)
        and not q.lstrip().upper().startswith(("CREATE", "ALTER", "DROP", "COMMENT"))
        and not any(fragment in q for fragment, _ in CROSS_USER)
    ]
    assert unscoped == [], "\n\n".join(unscoped)
