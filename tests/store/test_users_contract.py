"""A user as a whole (issue 17): export names every row the store holds for them; erasure leaves none, on every
backend, and leaves other users (same tenant, or the same user id in another tenant) untouched.

The tables are read from the database catalogue, never listed here: a table added later that holds user data (a
``user_id`` column, or a key to a user's session, turn or vector) fails this test until erasure covers it, and a
table the test cannot attribute to a user fails it too until it is named in ``NOT_USER_DATA`` with the reason.
The user is populated through the public API (memories managed, chat turns with the offline models, an import,
a session ended), plus what the offline models do not produce (artifacts, snapshots, a superseded memory, a
pending detection job, on PostgreSQL an HNSW index of the user's own).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import psycopg
import pytest

from memstack.bench.plans import workload
from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import InputError
from memstack.store._users import PAGE, SESSION_PAGE
from memstack.store.base import Store
from memstack.store.postgres import PostgresStore
from memstack.store.sqlite import SQLiteStore
from memstack.types import (
    ArchivedTurn,
    Artifact,
    BaseTruthSnapshot,
    DeletedBy,
    Fact,
    NewMemory,
    TurnCommit,
    TurnStatus,
    TurnSummary,
    UserRef,
)
from memstack.users import EXPORT_FORMAT, EXPORT_VERSION

from .conftest import BACKENDS, Vectors

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
ALICE = UserRef("alice", tenant="acme")
BOB = UserRef("bob", tenant="acme")
ALICE_ELSEWHERE = UserRef("alice", tenant="globex")

#: Tables that hold no user's data, each with the reason.
NOT_USER_DATA = {
    "meta": "the embedding model of the file",
    "memstack_meta": "the embedding model of the database",
    "_migrations": "applied migrations",
    "memstack_migrations": "applied migrations",
    "sqlite_sequence": "SQLite's AUTOINCREMENT counters",
    "api_keys": "per tenant, not per user",
    "agents": "agent definitions, per tenant",
    "user_erasures": "erasure fences: a digest of an erased (tenant, user) and a random epoch, kept a day",
    "webhook_endpoints": "a tenant's webhook URLs",
}
#: What an erasure itself writes under the user's name: its webhook event (the user's id and a count, nothing they
#: said), kept until delivered like any other.
ERASURE_NOTICES = {"webhook_outbox": "type <> 'user.erased'"}
#: SQLite's full-text indexes (FTS5) and their shadow tables: kept in step by triggers on the tables they index
#: (checked through the public API below: a text search finds nothing of an erased user).
FTS = re.compile(r"^(memories|session_turns)_fts(_data|_idx|_docsize|_config|_content)?$")
#: Tables that are only written during ``memstack reembed`` (which a store cannot be opened during).
ONLY_DURING_REEMBED = {"reembed_vectors"}


class Catalogue:
    """The database's tables and their columns, and counts of one user's rows in each, by plain SQL."""

    def __init__(self, backend: str, store: Any, url: str | None) -> None:
        self.backend = backend
        self.path: Path | None = store.path if isinstance(store, SQLiteStore) else None
        self.url = url

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        if self.path is not None:
            conn = sqlite3.connect(self.path)
            try:
                yield conn
            finally:
                conn.close()
        else:
            assert self.url is not None
            with psycopg.connect(self.url, autocommit=True) as conn:
                yield conn

    def _all(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if self.path is None:
            query = query.replace("?", "%s")
        with self._conn() as conn:
            return [tuple(r) for r in conn.execute(query, params).fetchall()]

    def tables(self) -> dict[str, set[str]]:
        if self.path is not None:
            names = [r[0] for r in self._all("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {n: {str(c[1]) for c in self._all(f"PRAGMA table_info('{n}')")} for n in names}
        rows = self._all(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema "
            "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
        )
        tables: dict[str, set[str]] = {}
        for table, column in rows:
            tables.setdefault(str(table), set()).add(str(column))
        return tables

    def user_tables(self) -> dict[str, str]:
        """Every table holding user data → the statement counting one user's rows in it (tenant, user_id)."""
        key = "pk" if self.path is not None else "seq"
        counts: dict[str, str] = {}
        for table, columns in sorted(self.tables().items()):
            if table in NOT_USER_DATA or FTS.match(table):
                continue
            if "user_id" in columns:
                notice = f" AND {ERASURE_NOTICES[table]}" if table in ERASURE_NOTICES else ""
                counts[table] = f"SELECT count(*) FROM {table} WHERE tenant = ? AND user_id = ?{notice}"
            elif columns & {"session_pk", "session_seq"}:
                column = "session_pk" if "session_pk" in columns else "session_seq"
                counts[table] = (
                    f"SELECT count(*) FROM {table} WHERE {column} IN "
                    f"(SELECT {key} FROM sessions WHERE tenant = ? AND user_id = ?)"
                )
            elif columns & {"turn_pk", "turn_seq"}:
                column = "turn_pk" if "turn_pk" in columns else "turn_seq"
                counts[table] = (
                    f"SELECT count(*) FROM {table} WHERE {column} IN "
                    f"(SELECT {key} FROM session_turns WHERE tenant = ? AND user_id = ?)"
                )
            elif table == "reembed_vectors":
                counts[table] = (
                    "SELECT count(*) FROM reembed_vectors WHERE tbl = 'memories' AND row_id IN "
                    f"(SELECT {key} FROM memories WHERE tenant = ? AND user_id = ?)"
                )
            else:
                pytest.fail(
                    f"table {table} ({sorted(columns)}) cannot be attributed to a user by this test: give it a "
                    "user_id column (and erase it in store/*/users.py), or name it in NOT_USER_DATA with the reason"
                )
        return counts

    def counts(self, user: UserRef) -> dict[str, int]:
        return {t: int(self._all(q, (user.tenant, user.user_id))[0][0]) for t, q in self.user_tables().items()}

    def all_rows(self, user: UserRef, query: str) -> list[tuple[Any, ...]]:
        return self._all(query, (user.tenant, user.user_id))

    def user_index(self, name: str) -> bool:
        if self.path is not None:
            return False
        return bool(self._all("SELECT count(*) FROM pg_class WHERE relname = ? AND relkind = 'i'", (name,))[0][0])


@pytest.fixture(params=BACKENDS)
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[AsyncMemstack, Catalogue]]:
    backend = str(request.param)
    url: str | None = None
    settings: dict[str, Any] = {}
    if backend != "sqlite":
        url = str(request.getfixturevalue("postgres_url"))
        settings["database_url"] = url
        if backend == "pgbouncer":
            pooled = request.getfixturevalue("pgbouncer").url(urlparse(url).path.lstrip("/"))
            settings.update(database_url=pooled, database_pooler="transaction", database_direct_url=url)
    async with AsyncMemstack(Config(home=tmp_path, **settings)) as ms:
        yield ms, Catalogue(backend, ms.store, url)


async def _populate(ms: AsyncMemstack, user: UserRef) -> None:
    await workload(ms, user, now=NOW)  # memories managed, chat turns, contexts, an import, a session ended
    await ms.wait_idle()
    forgotten = await ms.forget_about(user, "Porto")  # what the user said about it is hidden with the memory
    assert forgotten.memories and forgotten.hidden
    await ms.chat(user, "Here is my script:\n```python\nprint('hello')\n```\nWhat does it do?", session_id="code")
    old = await ms.add(user, "I drink green tea", category="preference")
    # force: the dedup rule calls the richer text a duplicate of the first, and this test needs both stored
    new = await ms.add(user, "I drink green tea every morning", category="preference", force=True)
    await ms.store.memories.forget(user, old.id, by=DeletedBy.AI, merged_into=new.id, note="superseded")
    # When a memory held in the user's life: an interval, and news that closes it (a past version kept).
    lived = await ms.add(user, "I live in Ghent", category="fact", valid_from=datetime(2019, 5, 1, tzinfo=UTC))
    await ms.supersede(user, lived.id, "I live in Bruges", at=datetime(2024, 3, 1, tzinfo=UTC))
    # What the offline models do not write: an artifact and a snapshot of a turn, a detection still pending.
    held = await ms.store.sessions.acquire(user, "drafts")
    try:
        state = await ms.store.sessions.open(user, "drafts")
        from memstack.types import ArchivedTurn

        await ms.store.sessions.record(
            user, ArchivedTurn("drafts", 1, "draft me a note", "Dear team,", NOW), lease=held.lease
        )
        facts = (Fact("writes to the team", since_turn=1),)
        commit = TurnCommit(
            1,
            TurnStatus.SUMMARIZED,
            TurnSummary(1, "asked for a note", "drafted it"),
            facts,
            state.version,
            artifacts=(Artifact(1, "draft", "Dear team,"),),
            snapshots=(BaseTruthSnapshot(1, "periodic", facts),),
        )
        await ms.store.sessions.commit(user, "drafts", commit, lease=held.lease)
    finally:
        await held.release()
    await ms.store.threads.mark(user, "0" * 64, "drafts", 1)  # a conversation an OpenAI client keeps
    # a response kept under an HTTP write's Idempotency-Key (keys are per tenant: one per user here)
    key = f"retry-{user.user_id}"
    assert await ms.store.idempotency.claim(user, key, "fp", now=datetime.now(UTC), ttl_s=3600, stale_s=600) is None
    await ms.store.idempotency.complete(user, key, "fp", 201, b'{"content": "I drink green tea"}', "application/json")
    payload = {"tenant": user.tenant, "user_id": user.user_id, "message": "remember my dog Rex"}
    await ms.store.jobs.enqueue("test-pending", f"{user.tenant}/{user.user_id}", payload)
    await ms.store.drops.record(user, at=NOW)  # an automatic capture a full tier kept out (no tiers here)
    if isinstance(ms.store, PostgresStore):
        assert await ms.store.vectors.indexes.ensure(user) is not None  # a very large user's own HNSW index
    await ms.wait_idle()


async def test_export_names_every_row_and_erasure_leaves_none(engine: tuple[AsyncMemstack, Catalogue]) -> None:
    ms, db = engine
    for tenant in ("acme", "globex"):  # every change is also a webhook event waiting for its delivery
        await ms.webhooks.create("http://127.0.0.1:9/unreachable", tenant=tenant)
    for user in (ALICE, BOB, ALICE_ELSEWHERE):
        await _populate(ms, user)
    before = db.counts(ALICE)
    known = {"memories", "memory_history", "sessions", "session_turns", "session_artifacts", "session_snapshots"}
    known |= {"session_leases", "archive_vectors", "context_manifests", "jobs", "chat_threads", "idempotency_keys"}
    known |= {"capture_drops", "hidden_items", "webhook_outbox"}
    if isinstance(ms.store, PostgresStore):
        known |= {"archive_stats", "memory_ann_indexes"}
    assert known <= set(before)  # the catalogue was read (a sanity check, not the list the test relies on)
    empty = sorted(t for t, n in before.items() if n == 0 and t not in ONLY_DURING_REEMBED)
    assert empty == [], f"the test user has no rows in {empty}: populate them so erasure is tested there"
    others = {user: db.counts(user) for user in (BOB, ALICE_ELSEWHERE)}

    # -- export: every memory, history entry, session, turn, archived message, artifact, snapshot, context, job
    document = await ms.export(ALICE)
    assert (document["format"], document["version"]) == (EXPORT_FORMAT, EXPORT_VERSION)
    assert (document["tenant"], document["user_id"]) == ("acme", "alice")
    memories = document["memories"]
    stored_ids = {r[0] for r in db.all_rows(ALICE, "SELECT id FROM memories WHERE tenant = ? AND user_id = ?")}
    history_ids = {
        r[0] for r in db.all_rows(ALICE, "SELECT memory_id FROM memory_history WHERE tenant = ? AND user_id = ?")
    }
    assert {m["id"] for m in memories if m["stored"]} == stored_ids
    assert {m["id"] for m in memories} == stored_ids | history_ids
    assert len(memories) == len(stored_ids | history_ids)
    assert any(not m["stored"] for m in memories)  # the permanently deleted note: its history remains
    assert any(m.get("merged_into") for m in memories)  # superseded
    assert any(m.get("is_active") is False for m in memories)
    assert sum(len(m["history"]) for m in memories) == before["memory_history"]
    assert sum(len(m["hides"]) for m in memories) == before["hidden_items"]
    sessions = document["sessions"]
    session_ids = {r[0] for r in db.all_rows(ALICE, "SELECT id FROM sessions WHERE tenant = ? AND user_id = ?")}
    assert {s["id"] for s in sessions} == session_ids and len(sessions) == len(session_ids)
    assert sum(len(s["turns"]) for s in sessions) == before["session_turns"]
    assert sum(len(s["messages"]) for s in sessions) == before["archive_vectors"]
    assert sum(len(s["artifacts"]) for s in sessions) == before["session_artifacts"]
    assert sum(len(s["snapshots"]) for s in sessions) == before["session_snapshots"]
    drafts = next(s for s in sessions if s["id"] == "drafts")
    assert drafts["facts"][0]["text"] == "writes to the team"
    assert drafts["turns"][0]["user_text"] == "draft me a note"
    contexts = {
        r[0] for r in db.all_rows(ALICE, "SELECT context_id FROM context_manifests WHERE tenant = ? AND user_id = ?")
    }
    assert {c["context_id"] for c in document["contexts"]} == contexts
    jobs = {r[0] for r in db.all_rows(ALICE, "SELECT id FROM jobs WHERE tenant = ? AND user_id = ?")}
    assert {j["id"] for j in document["jobs"]} == jobs
    assert "Rex" in str(document["jobs"])
    (dropped,) = document["dropped_captures"]
    assert dropped["count"] == 1
    assert datetime.fromisoformat(dropped["first_at"]) == datetime.fromisoformat(dropped["last_at"]) == NOW
    assert "bob" not in str(document).lower()

    # -- erasure: the report counts what went; nothing of alice in acme is left; everyone else is untouched
    report = await ms.erase(ALICE)
    assert set(before) - ONLY_DURING_REEMBED <= set(report.removed), "a table holding user data is not erased"
    assert {t: report.removed[t] for t in before} == before
    assert report.total == sum(before.values())
    after = db.counts(ALICE)
    assert after == dict.fromkeys(after, 0)
    assert {user: db.counts(user) for user in (BOB, ALICE_ELSEWHERE)} == others
    if isinstance(ms.store, PostgresStore):
        assert report.indexes_dropped == 1
        assert await ms.store.vectors.indexes.lookup(ALICE) is None
        assert await ms.store.vectors.indexes.lookup(BOB) is not None
        from memstack.store.vectors.hnsw import index_name

        assert not db.user_index(index_name(ALICE))

    # -- and through the public API alice looks like a user never seen
    assert await ms.list(ALICE, include_deleted=True) == []
    assert await ms.list(ALICE, text="bees") == []
    assert await ms.search(ALICE, "bees", limit=5) == []
    assert await ms.store.search_index.search_text(ALICE, "bees", 5) == []
    assert await ms.store.archive.sessions(ALICE) == []
    assert await ms.store.archive.search(ALICE, "Porto", 5) == []
    assert await ms.store.archive.turns(ALICE) == []
    assert await ms.store.contexts.recent(ALICE) == []
    assert await ms.recall(ALICE, "what did I say about pottery?", limit=5) == []
    assert (await ms.usage(ALICE)).active == 0 and (await ms.usage(ALICE)).dropped == 0
    assert (await ms.usage(BOB)).dropped == 1
    again = await ms.export(ALICE)
    assert [again[k] for k in ("memories", "sessions", "contexts", "jobs", "dropped_captures")] == [[]] * 5
    # the pending job is gone: no worker (here or in another process) claims it
    claimed = await ms.store.jobs.claim_pending("test-pending", 100)
    assert {(j.payload["tenant"], j.payload["user_id"]) for j in claimed} == {("acme", "bob"), ("globex", "alice")}
    assert len(await ms.list(BOB, include_deleted=True)) == len(await ms.list(BOB, include_deleted=True))
    assert await ms.recall(BOB, "what did I say about pottery?", limit=5) != []
    # erasing again (or a user never seen) removes nothing and is not an error
    assert (await ms.erase(ALICE)).total == 0
    assert (await ms.erase(UserRef("nobody", tenant="acme"))).total == 0


async def test_a_turn_in_flight_cannot_write_after_erasure(engine: tuple[AsyncMemstack, Catalogue]) -> None:
    """A turn that holds the session when the user is erased (its exchange recorded, phase 2 not yet committed)
    cannot write after: its lease and its session are gone, so neither a commit nor another record resurrects
    the user."""
    from memstack.errors import LeaseLost, NotFound

    ms, db = engine
    held = await ms.store.sessions.acquire(ALICE, "s1")
    try:
        state = await ms.store.sessions.open(ALICE, "s1")
        await ms.store.sessions.record(ALICE, ArchivedTurn("s1", 1, "hi", "hello", NOW), lease=held.lease)
        await ms.erase(ALICE)
        commit = TurnCommit(1, TurnStatus.SUMMARIZED, TurnSummary(1, "hi", "hello"), (), state.version)
        with pytest.raises((LeaseLost, NotFound)):
            await ms.store.sessions.commit(ALICE, "s1", commit, lease=held.lease)
        with pytest.raises((LeaseLost, NotFound)):
            await ms.store.sessions.record(ALICE, ArchivedTurn("s1", 2, "hi", "hello", NOW), lease=held.lease)
    finally:
        await held.release()
    assert db.counts(ALICE) == dict.fromkeys(db.user_tables(), 0)


async def test_a_large_user_is_exported_a_page_at_a_time(store: Store, vecs: Vectors) -> None:
    """More memories, deleted ones and sessions than one page holds: each exactly once, in the order written."""
    n = PAGE * 2 + 7
    added = await store.memories.add_many(ALICE, [NewMemory(f"note {i}") for i in range(n)], vecs.many(n))
    await store.memories.add_many(BOB, [NewMemory("bob's note")], vecs.many(1))
    for memory in added[: PAGE + 3]:  # deleted for good: only their history remains, more than a page of them
        await store.memories.delete(ALICE, memory.id)
    for i in range(SESSION_PAGE + 2):
        await store.sessions.open(ALICE, f"s{i}")
    records = [r async for r in store.users.export(ALICE)]
    memories = [r.data for r in records if r.kind == "memory"]
    assert len(memories) == n and len({m["id"] for m in memories}) == n
    assert {m["id"] for m in memories} == {m.id for m in added}
    assert sum(not m["stored"] for m in memories) == PAGE + 3
    assert [m["content"] for m in memories if m["stored"]] == [f"note {i}" for i in range(PAGE + 3, n)]
    assert all([e["action"] for e in m["history"]] == ["create", "delete"] for m in memories if not m["stored"])
    sessions = [r.data["id"] for r in records if r.kind == "session"]
    assert sorted(sessions) == sorted(f"s{i}" for i in range(SESSION_PAGE + 2))
    assert [r.kind for r in records] == sorted(
        (r.kind for r in records), key=["memory", "session", "context", "job"].index
    )
    report = await store.users.erase(ALICE)
    assert report.removed["memories"] == n - PAGE - 3 and report.removed["sessions"] == SESSION_PAGE + 2
    assert [r async for r in store.users.export(ALICE)] == []
    assert len([r async for r in store.users.export(BOB)]) == 1


async def test_a_tenants_users_are_listed_a_page_at_a_time(store: Store, vecs: Vectors) -> None:
    """Anyone with a memory (a forgotten one too) or a session, once each, in byte order on every backend, with
    their counts; another tenant's users never; an erased user no more."""
    carol, dave, eve, zoe = (UserRef(n, tenant="acme") for n in ("carol", "Dave", "éve", "zoé"))
    await store.memories.add_many(ALICE, [NewMemory("a1"), NewMemory("a2")], vecs.many(2))
    forgotten = (await store.memories.add_many(BOB, [NewMemory("b1")], vecs.many(1)))[0]
    await store.memories.forget(BOB, forgotten.id, by=DeletedBy.USER)
    await store.sessions.open(carol, "s1")  # sessions only, no memory
    await store.sessions.open(ALICE, "s1")
    for user in (dave, eve, zoe):
        await store.memories.add_many(user, [NewMemory("x")], vecs.many(1))
    await store.memories.add_many(ALICE_ELSEWHERE, [NewMemory("g")], vecs.many(1))

    everyone = await store.users.list("acme")
    assert [u.user_id for u in everyone] == ["Dave", "alice", "bob", "carol", "zoé", "éve"]  # byte order
    by_id = {u.user_id: u for u in everyone}
    assert (by_id["alice"].memories, by_id["alice"].sessions) == (2, 1)
    assert (by_id["bob"].memories, by_id["bob"].sessions) == (0, 0)  # forgotten: still a user, 0 active
    assert (by_id["carol"].memories, by_id["carol"].sessions) == (0, 1)
    assert all(u.last_active is not None for u in everyone)

    pages, after = [], None
    while page := await store.users.list("acme", after=after, limit=4):
        pages.append([u.user_id for u in page])
        after = page[-1].user_id
    assert pages == [["Dave", "alice", "bob", "carol"], ["zoé", "éve"]]
    assert [u.user_id for u in await store.users.list("globex")] == ["alice"]
    assert await store.users.list("nobody") == []
    with pytest.raises(InputError, match="limit"):
        await store.users.list("acme", limit=0)
    await store.users.erase(BOB)
    assert "bob" not in [u.user_id for u in await store.users.list("acme")]
