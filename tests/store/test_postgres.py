"""PostgreSQL-specific behaviour: connecting, pgvector, migrations, plan choice and per-user HNSW indexes.

What every backend must do is in ``test_contract.py``; this file covers what only the PostgreSQL store has. Every
test runs against a real embedded PostgreSQL 18 + pgvector server (``tests/conftest.py``).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import psycopg
import pytest
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg_pool import PoolTimeout

from memstack.errors import ConfigError, InputError, LimitReached, MigrationError, StoreError, StoreUnavailable
from memstack.store.postgres import AnnSettings, PostgresStore
from memstack.store.postgres._db import map_error
from memstack.store.postgres._schema import MIGRATIONS
from memstack.store.vectors.hnsw import index_name
from memstack.types import Category, Memory, MemoryFilter, MemoryPatch, NewMemory, UserRef
from memstack_testing.postgres import EmbeddedPostgres

pytestmark = pytest.mark.postgres

DIM = 16
ALICE = UserRef("alice")
BOB = UserRef("bob")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.normal(size=(n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def brute_top(matrix: np.ndarray, query: np.ndarray, k: int, allowed: list[bool] | None = None) -> list[int]:
    order = [int(i) for i in np.argsort(-(matrix @ query), kind="stable")]
    return [i for i in order if allowed is None or allowed[i]][:k]


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[PostgresStore]:
    s = await PostgresStore.open(postgres_url, dim=DIM, embedder="test:random16")
    yield s
    await s.close()


def as_role(url: str, role: str) -> str:
    return url.replace("postgres:@", f"{role}:@", 1)


# -- the server is not there, or not usable ---------------------------------------------------------------------------


async def test_no_server_at_the_url_is_store_unavailable(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="cannot connect") as info:
        await PostgresStore.open(f"postgresql://postgres@/memstack?host={tmp_path}", dim=DIM, embedder="e")
    assert "server is running" in str(info.value) and "MEMSTACK_DATABASE_URL" in str(info.value)


@pytest.mark.parametrize("url", ["postgresql://user@host:notaport/db", "postgresql://host/db?sslmode=sometimes"])
async def test_a_malformed_url_is_store_unavailable(url: str) -> None:
    with pytest.raises(StoreUnavailable, match="postgresql://"):
        await PostgresStore.open(url, dim=DIM, embedder="e", timeout_s=2)


async def test_a_missing_database_is_named(postgres_server: EmbeddedPostgres) -> None:
    with pytest.raises(StoreUnavailable, match="no_such_db"):
        await PostgresStore.open(postgres_server.database_url("no_such_db"), dim=DIM, embedder="e")


async def test_a_server_that_goes_away_gives_store_unavailable_not_a_driver_error() -> None:
    with EmbeddedPostgres(settings={"shared_buffers": "48MB"}) as server:
        url = server.create_database("going")
        store = await PostgresStore.open(url, dim=DIM, embedder="e", timeout_s=2)
        assert await store.setting("shared_buffers") == "48MB"  # the server was configured before it served
        memory = await store.memories.add(ALICE, NewMemory("still here"), unit(np.random.default_rng(1), 1)[0])
        server.stop()
        for _ in range(2):  # the pooled connection dies, then no new one can be made
            with pytest.raises(StoreUnavailable, match="PostgreSQL"):
                await store.memories.get(ALICE, memory.id)
        await store.close()


async def test_pgvector_not_installed_on_the_server_is_store_unavailable(postgres_server: EmbeddedPostgres) -> None:
    # PostgreSQL 18 looks for extensions along extension_control_path: an empty directory there is a server on
    # which pgvector was never installed.
    empty = tempfile.mkdtemp(prefix="memstack-noext-")
    try:
        os.chmod(empty, 0o755)
        url = postgres_server.create_database("without_pgvector")
        postgres_server.execute(f"ALTER DATABASE without_pgvector SET extension_control_path = '{empty}'")
        with pytest.raises(StoreUnavailable, match="pgvector") as info:
            await PostgresStore.open(url, dim=DIM, embedder="e")
        assert "not available" in str(info.value) and "0.8" in str(info.value)
    finally:
        postgres_server.drop_database("without_pgvector")
        os.rmdir(empty)


async def test_a_role_that_may_not_create_pgvector_is_told_who_can(postgres_server: EmbeddedPostgres) -> None:
    postgres_server.execute("DROP ROLE IF EXISTS app_plain", "CREATE ROLE app_plain LOGIN")
    url = postgres_server.create_database("plain_app")
    try:
        with pytest.raises(StoreUnavailable, match="permission denied") as info:
            await PostgresStore.open(as_role(url, "app_plain"), dim=DIM, embedder="e")
        assert "superuser" in str(info.value) and "CREATE EXTENSION vector" in str(info.value)
        # once an administrator has installed it, the same role can open (and migrate) its database
        postgres_server.execute(
            "CREATE EXTENSION vector", "GRANT CREATE ON SCHEMA public TO app_plain", database="plain_app"
        )
        store = await PostgresStore.open(as_role(url, "app_plain"), dim=DIM, embedder="e")
        await store.memories.add(ALICE, NewMemory("works"), unit(np.random.default_rng(2), 1)[0])
        assert await store.index.count_active(ALICE) == 1
        await store.close()
    finally:
        postgres_server.drop_database("plain_app")
        postgres_server.execute("DROP ROLE app_plain")


# -- migrations -------------------------------------------------------------------------------------------------------


async def test_migrations_run_once_even_when_processes_start_together(postgres_url: str) -> None:
    stores = await asyncio.gather(*(PostgresStore.open(postgres_url, dim=DIM, embedder="e") for _ in range(4)))
    for s in stores:
        await s.close()
    with psycopg.connect(postgres_url) as conn:
        applied = conn.execute("SELECT name, applied_at FROM memstack_migrations ORDER BY name").fetchall()
        assert [name for name, _ in applied] == [name for name, _ in MIGRATIONS]
        assert conn.execute("SELECT value FROM memstack_meta WHERE key = 'dim'").fetchone() == (str(DIM),)
    again = await PostgresStore.open(postgres_url, dim=DIM, embedder="e")
    await again.close()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT name, applied_at FROM memstack_migrations ORDER BY name").fetchall() == applied


async def test_a_database_from_a_newer_memstack_is_refused(postgres_url: str) -> None:
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder="e")
    await store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO memstack_migrations VALUES ('9999_from_the_future', now())")
    with pytest.raises(MigrationError, match="newer memstack"):
        await PostgresStore.open(postgres_url, dim=DIM, embedder="e")


async def test_bad_settings_are_config_errors(postgres_url: str) -> None:
    with pytest.raises(ConfigError):
        await PostgresStore.open(postgres_url, dim=0, embedder="e")
    with pytest.raises(ConfigError, match="ef_search"):
        AnnSettings(ef_search=0)


# -- plan choice: exactly k, prepared or not --------------------------------------------------------------------------


async def test_exact_search_returns_k_after_the_statement_is_prepared(postgres_url: str) -> None:
    rng = np.random.default_rng(3)
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", pool_size=1)
    try:
        # Another user with most of the rows: a generic plan (which cannot know whose rows it will read) then
        # expects half the table for any user, which is when a filtered HNSW scan looks cheapest.
        await store.memories.add_many(BOB, [NewMemory(f"x{j}") for j in range(3000)], unit(rng, 3000))
        cats = [Category.PREFERENCE if i % 3 == 0 else Category.FACT for i in range(60)]
        matrix = unit(rng, 60)
        added = await store.memories.add_many(
            ALICE, [NewMemory(f"m{i}", category=c) for i, c in enumerate(cats)], matrix
        )
        prefs = MemoryFilter(categories=(Category.PREFERENCE,))
        # An HNSW index over every row (an operator's, or a later migration's) must not change the plan: a filtered
        # HNSW scan would post-filter other users' rows away and return approximate, possibly fewer, results.
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("CREATE INDEX everyone_hnsw ON memories USING hnsw (embedding vector_cosine_ops)")
            conn.execute("ANALYZE memories")
        # psycopg prepares a statement on its 6th run; PostgreSQL then plans it for each run's values five times
        # and may switch to one generic plan for every user, planned without knowing whose rows it will read.
        # Whether it switches depends on the data, so this test makes it switch.
        async with store._db.connection() as conn:  # the pool's only connection
            await conn.execute("SET plan_cache_mode = force_generic_plan")
        for _ in range(6):
            await store.index.nearest(BOB, unit(rng, 1)[0], 10)
            await store.index.nearest(BOB, unit(rng, 1)[0], 10, prefs)
        for _ in range(8):
            q = unit(rng, 1)[0]
            hits = await store.index.nearest(ALICE, q, 10)
            assert [h.memory.id for h in hits] == [added[i].id for i in brute_top(matrix, q, 10)]
            hits = await store.index.nearest(ALICE, q, 10, prefs)
            want = brute_top(matrix, q, 10, [c == Category.PREFERENCE for c in cats])
            assert [h.memory.id for h in hits] == [added[i].id for i in want]
            assert len(await store.index.nearest(ALICE, q, 50, prefs)) == 20
        # The plans the server really used for the prepared statements read alice's rows through a btree, never
        # through the HNSW index.
        async with store._db.connection() as conn:  # the pool's only connection: the one that prepared them
            cur = await conn.execute(
                "SELECT name, parameter_types::text[], generic_plans + custom_plans FROM pg_prepared_statements "
                "WHERE statement LIKE '%%AS distance%%'"
            )
            prepared = await cur.fetchall()
            assert len(prepared) == 2  # with and without the category filter
            for name, types, runs in prepared:
                assert runs >= 8  # executions since it was prepared (all with the generic plan)
                args: list[object] = ["[" + ",".join(map(str, matrix[0])) + "]", "default", "alice", 10]
                if len(types) == 5:
                    args.insert(3, ["preference"])
                values = sql.SQL(", ").join(
                    sql.SQL("{}::{}").format(sql.Literal(a), sql.SQL(t)) for a, t in zip(args, types, strict=True)
                )
                cur = await conn.execute(sql.SQL("EXPLAIN EXECUTE {}({})").format(sql.Identifier(name), values))
                plan = "\n".join(r[0] for r in await cur.fetchall())
                assert "everyone_hnsw" not in plan and "memories_ann" not in plan, plan
    finally:
        await store.close()


async def test_connections_scan_hnsw_iteratively_in_utc(store: PostgresStore) -> None:
    assert await store.setting("hnsw.iterative_scan") == "relaxed_order"
    assert await store.setting("hnsw.ef_search") == str(AnnSettings().ef_search)
    assert await store.setting("TimeZone") == "UTC"


async def test_text_and_binary_vector_codecs_agree(postgres_url: str) -> None:
    rng = np.random.default_rng(4)
    binary = await PostgresStore.open(postgres_url, dim=DIM, embedder="e")
    text = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", vector_codec="text")
    try:
        matrix = unit(rng, 40)
        await binary.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(20)], matrix[:20])
        await text.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(20, 40)], matrix[20:])
        one = await text.memories.add(ALICE, NewMemory("via text"), unit(rng, 1)[0])
        q = unit(rng, 1)[0]
        a = await binary.index.nearest(ALICE, q, 41)
        b = await text.index.nearest(ALICE, q, 41)
        assert [h.memory.id for h in a] == [h.memory.id for h in b] and len(a) == 41
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)
        assert np.allclose((await binary.memories.get(ALICE, one.id)).embedding, one.embedding, atol=1e-6)
    finally:
        await binary.close()
        await text.close()


async def test_limit_holds_across_two_stores_on_one_database(postgres_url: str) -> None:
    rng = np.random.default_rng(5)
    first = await PostgresStore.open(postgres_url, dim=DIM, embedder="e")
    second = await PostgresStore.open(postgres_url, dim=DIM, embedder="e")
    try:
        adds = [
            s.memories.add(ALICE, NewMemory(f"race {i}"), unit(rng, 1)[0], limit=5)
            for i in range(10)
            for s in (first, second)
        ]
        results = await asyncio.gather(*adds, return_exceptions=True)
        assert sum(isinstance(r, Memory) for r in results) == 5
        assert sum(isinstance(r, LimitReached) for r in results) == 15
        assert await first.index.count_active(ALICE) == 5
    finally:
        await first.close()
        await second.close()


# -- very large users: their own HNSW index ----------------------------------------------------------------------------


async def test_a_large_user_is_searched_through_their_own_hnsw_index(postgres_url: str) -> None:
    rng = np.random.default_rng(6)
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", ann=AnnSettings(threshold=300))
    try:
        cats = [
            Category.GOAL if i % 40 == 0 else Category.PREFERENCE if i % 4 == 1 else Category.FACT for i in range(400)
        ]
        matrix = unit(rng, 400)
        added = await store.memories.add_many(
            ALICE, [NewMemory(f"m{i}", category=c) for i, c in enumerate(cats)], matrix
        )
        await store.memories.add_many(BOB, [NewMemory(f"b{i}") for i in range(100)], unit(rng, 100))
        assert await store.vectors.indexes.lookup(ALICE) == index_name(ALICE)
        assert await store.vectors.indexes.lookup(BOB) is None
        assert index_name(ALICE) in await store.index.explain_nearest(ALICE, matrix[0], 10)
        assert "memories_ann" not in await store.index.explain_nearest(BOB, matrix[0], 10)
        goals = MemoryFilter(categories=(Category.GOAL,))
        prefs = MemoryFilter(categories=(Category.PREFERENCE,))
        overlap = 0
        for _ in range(8):
            q = unit(rng, 1)[0]
            hits = await store.index.nearest(ALICE, q, 10)
            assert len(hits) == 10 and all(h.memory.user_id == "alice" for h in hits)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            overlap += len({h.memory.id for h in hits} & {added[i].id for i in brute_top(matrix, q, 10)})
            # 100 preferences: the iterative scan finds 10; 10 goals: exactly all of them, and k=20 still 10
            assert len(await store.index.nearest(ALICE, q, 10, prefs)) == 10
            got = await store.index.nearest(ALICE, q, 20, goals)
            assert sorted(h.memory.id for h in got) == sorted(added[i].id for i in range(0, 400, 40))
        assert overlap / 80 >= 0.95
        # another process learns of the index from its first search (still one statement, answered exactly)
        other = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", ann=AnnSettings(threshold=300))
        assert other.vectors.indexes.cached(ALICE) == (False, None)
        q = unit(rng, 1)[0]
        first = await other.index.nearest(ALICE, q, 10)
        assert [h.memory.id for h in first] == [added[i].id for i in brute_top(matrix, q, 10)]
        assert other.vectors.indexes.cached(ALICE) == (True, index_name(ALICE))
        assert other.vectors.indexes.cached(BOB) == (False, None)
        await other.index.nearest(BOB, q, 10)
        assert other.vectors.indexes.cached(BOB) == (True, None)
        assert index_name(ALICE) in await other.index.explain_nearest(ALICE, matrix[0], 10)
        await other.close()
    finally:
        await store.close()


async def test_crossing_the_threshold_with_one_add_builds_the_index_in_the_background(postgres_url: str) -> None:
    rng = np.random.default_rng(7)
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", ann=AnnSettings(threshold=50))
    try:
        await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(49)], unit(rng, 49))
        assert await store.vectors.indexes.lookup(ALICE) is None
        await store.memories.add(ALICE, NewMemory("the fiftieth"), unit(rng, 1)[0])
        await store.vectors.indexes.drain()
        assert await store.vectors.indexes.lookup(ALICE) == index_name(ALICE)
        assert len(await store.index.nearest(ALICE, unit(rng, 1)[0], 10)) == 10
    finally:
        await store.close()


async def test_an_index_left_half_built_is_replaced(postgres_url: str) -> None:
    rng = np.random.default_rng(8)
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", ann=AnnSettings(threshold=50))
    try:
        # what a crash during CREATE INDEX CONCURRENTLY leaves: an index under that name, never registered
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"CREATE INDEX {index_name(ALICE)} ON memories (seq)".encode())
        await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(60)], unit(rng, 60))
        assert await store.vectors.indexes.lookup(ALICE) == index_name(ALICE)
        with psycopg.connect(postgres_url) as conn:
            definition = conn.execute("SELECT pg_get_indexdef(%s::regclass)", (index_name(ALICE),)).fetchone()
        assert definition is not None and "hnsw" in definition[0] and "'alice'" in definition[0]
    finally:
        await store.close()


async def test_quotes_in_tenant_and_user_ids_stay_literals(postgres_url: str) -> None:
    rng = np.random.default_rng(9)
    odd = UserRef("o'brien'); DROP TABLE memories; --", tenant='te"nant')
    store = await PostgresStore.open(postgres_url, dim=DIM, embedder="e", ann=AnnSettings(threshold=30))
    try:
        matrix = unit(rng, 40)
        added = await store.memories.add_many(odd, [NewMemory(f"m{i}") for i in range(40)], matrix)
        await store.memories.add_many(ALICE, [NewMemory(f"a{i}") for i in range(40)], unit(rng, 40))
        assert await store.vectors.indexes.lookup(odd) == index_name(odd)
        assert "CTE ann" in await store.index.explain_nearest(odd, matrix[0], 5)  # the indexed statement
        hits = await store.index.nearest(odd, matrix[3], 5)
        assert len(hits) == 5 and hits[0].memory.id == added[3].id
        assert all(h.memory.user_id == odd.user_id and h.memory.tenant == odd.tenant for h in hits)
        assert await store.index.count_active(ALICE) == 40
    finally:
        await store.close()


async def test_text_search_splits_words_like_queries_do(store: PostgresStore) -> None:
    v = unit(np.random.default_rng(10), 3)
    version = await store.memories.add(ALICE, NewMemory("Runs Python 3.11 on a ThinkPad"), v[0])
    email = await store.memories.add(ALICE, NewMemory("Email is first.last@example.org"), v[1])
    assert [h.memory.id for h in await store.index.search_text(ALICE, "python 3", 5)] == [version.id]
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(text="3.11 thinkpad"))] == [version.id]
    assert [m.id for m in await store.index.list(ALICE, MemoryFilter(text="last example"))] == [email.id]
    assert [h.memory.id for h in await store.index.nearest(ALICE, v[2], 5, MemoryFilter(text="EXAMPLE.org"))] == [
        email.id
    ]


# -- failures inside the server: typed errors, nothing half-written ---------------------------------------------------


async def test_a_write_the_server_rejects_half_way_leaves_nothing_behind(
    store: PostgresStore, postgres_url: str
) -> None:
    rng = np.random.default_rng(11)
    kept = await store.memories.add(ALICE, NewMemory("already here"), unit(rng, 1)[0])
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # a server-side failure in the middle of a write
        conn.execute(
            "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.content LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned row'; END IF; RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER poison BEFORE INSERT OR UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
        )
    batch = [NewMemory("fine one"), NewMemory("fine two"), NewMemory("poison"), NewMemory("fine three")]
    with pytest.raises(StoreError, match="poisoned row") as info:
        await store.memories.add_many(ALICE, batch, unit(rng, 4))
    assert "nothing was changed" in str(info.value)
    with pytest.raises(StoreError, match="poisoned row"):
        await store.memories.update(ALICE, kept.id, MemoryPatch(content="now poison"), unit(rng, 1)[0])
    assert [m.content for m in await store.index.list(ALICE, MemoryFilter(include_deleted=True))] == ["already here"]
    assert len(await store.index.history(ALICE, kept.id)) == 1
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM memory_history").fetchone() == (1,)


async def test_nul_characters_are_refused_before_the_server_sees_them(store: PostgresStore) -> None:
    with pytest.raises(InputError, match="NUL"):
        await store.memories.add(ALICE, NewMemory("tab\x00bed"), unit(np.random.default_rng(12), 1)[0])


@pytest.mark.parametrize(
    ("error", "expected", "words"),
    [
        (psycopg.OperationalError("server closed the connection unexpectedly"), StoreUnavailable, "server is running"),
        (pg_errors.AdminShutdown("terminating connection"), StoreUnavailable, "server is running"),
        (PoolTimeout("couldn't get a connection after 10.00 sec"), StoreUnavailable, "pool_size"),
        (pg_errors.QueryCanceled("canceling statement due to statement timeout"), StoreError, "try again"),
        (pg_errors.DeadlockDetected("deadlock detected"), StoreError, "try again"),
        (pg_errors.UndefinedTable('relation "memories" does not exist'), MigrationError, "migrations run"),
        (pg_errors.InsufficientPrivilege("permission denied for table memories"), StoreError, "grant"),
        (pg_errors.DiskFull("could not extend file"), StoreError, "nothing was changed"),
        (pg_errors.TooManyConnections("sorry, too many clients already"), StoreUnavailable, "max_connections"),
    ],
)
def test_driver_errors_become_typed_errors_that_say_what_to_do(
    error: Exception, expected: type[Exception], words: str
) -> None:
    mapped = map_error(error, "postgres@localhost/memstack")
    assert type(mapped) is expected and words in str(mapped)
