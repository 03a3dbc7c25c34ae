"""Every statement on a user's data names the user: the condition for sharding by user (docs/scaling.md).

A real workload (``memstack.bench.plans.workload``: memories managed, chat turns with phase 2 and detection, recall,
an import, a session ended, contexts read back) runs on PostgreSQL with ``pg_stat_statements`` on; then every
statement the store sent that touches a per-user table must filter by ``tenant`` and ``user_id`` (so on a cluster
sharded by user it goes to one shard). The few statements that are cross-user by design are listed here, each with
the reason; a new one fails this test until it is either scoped or listed (and docs/scaling.md says how it runs on a
sharded cluster).
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from memstack.bench.plans import names_the_user, touches_user_data, workload
from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.types import UserRef

#: Statements that read across users on purpose: (a fragment that identifies it, why).
CROSS_USER = (
    ("WHERE t.status IN ('pending', 'unsummarized') ORDER BY", "startup/periodic scan for turns left unsummarized"),
    ("WHERE NOT EXISTS (SELECT 1 FROM archive_vectors v WHERE v.turn_seq = t.seq)", "startup backfill of vectors"),
    ("memstack_migrations", "schema migrations"),
    ("pg_stat_statements", "this test"),
)


async def test_every_statement_on_user_data_names_the_user(postgres_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    async with AsyncMemstack(Config(home=tmp_path, database_url=postgres_url), resume=False):
        pass  # the schema is migrated first: migrations convert every user's rows at once, by design
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("SELECT pg_stat_statements_reset()")
    now = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
    async with AsyncMemstack(Config(home=tmp_path, database_url=postgres_url)) as ms:
        for user in (UserRef("alice", tenant="acme"), UserRef("bob", tenant="acme")):
            await workload(ms, user, now=now)
        carol = UserRef("carol", tenant="acme")  # a user exported and erased (issue 17): those statements too
        await workload(ms, carol, now=now)
        await ms.export(carol)
        await ms.erase(carol)
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
        if touches_user_data(q)
        and not names_the_user(q)
        and not q.lstrip().upper().startswith(("CREATE", "ALTER", "DROP", "COMMENT"))
        and not any(fragment in q for fragment, _ in CROSS_USER)
    ]
    assert unscoped == [], "\n\n".join(unscoped)
