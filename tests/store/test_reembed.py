"""``memstack reembed`` on both backends: switch 384-d vectors to another model and dimension, resume an interrupted
run, refuse to open half-way, lock out a second run, keep rows written meanwhile right."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import pytest

from memstack.embed import get_embedder
from memstack.errors import ConfigError, ReembedInProgress, StoreBusy
from memstack.store.base import Store
from memstack.store.reembed import ReembedBackend, abort, reembed
from memstack.types import MemoryFilter, MemoryPatch, NewMemory, UserRef, Vector
from memstack_testing.hashing import HashingEmbedder

OLD, NEW = get_embedder("hash:384"), get_embedder("hash:256")
ALICE, BOB = UserRef("alice"), UserRef("bob")
TOPICS = ["tea", "chess", "rust", "violin", "hiking", "sushi", "python", "jazz", "paris", "cats", "rowing", "opera"]


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, remembering every text it was asked to embed."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> Vector:
        self.texts.extend(texts)
        return self.embed_sync(texts)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Reembedding runs on a direct connection (through a transaction pooler it takes MEMSTACK_DATABASE_DIRECT_URL)."""
    return str(request.param)


class Stop(Exception):
    """Raised from the batch callback to interrupt a run."""


async def _open(request: pytest.FixtureRequest, tmp_path: Path, backend: str, embedder: HashingEmbedder) -> Store:
    """This test's store (the same storage on every call), opened with ``embedder``'s model."""
    if backend == "postgres":
        from memstack.store.postgres import PostgresStore

        url = request.getfixturevalue("postgres_url")
        store: Store = await PostgresStore.open(url, dim=embedder.dim, embedder=embedder.name)
        return store
    from memstack.store.sqlite import SQLiteStore

    return await SQLiteStore.open(tmp_path / "memstack.db", dim=embedder.dim, embedder=embedder.name)


class Opener(Protocol):
    async def __call__(self) -> ReembedBackend: ...


@pytest.fixture
async def open_reembed(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Open this test's store for reembedding (each handle is closed at the end)."""
    opened: list[ReembedBackend] = []

    async def factory() -> ReembedBackend:
        if backend == "postgres":
            from memstack.store.postgres.reembed import PgReembed

            handle: ReembedBackend = await PgReembed.open(request.getfixturevalue("postgres_url"))
        else:
            from memstack.store.sqlite.reembed import SQLiteReembed

            handle = await SQLiteReembed.open(tmp_path / "memstack.db")
        opened.append(handle)
        return handle

    yield factory
    for handle in opened:
        await handle.aclose()


async def _fill(store: Store) -> dict[str, str]:
    """12 memories of alice (one forgotten, one deleted for good) and 3 of bob; returns alice's ids by topic."""
    texts = [f"alice is fond of {t}" for t in TOPICS]
    added = await store.memories.add_many(ALICE, [NewMemory(t) for t in texts], await OLD.embed(texts))
    bob = [f"bob collects {t} stamps" for t in TOPICS[:3]]
    await store.memories.add_many(BOB, [NewMemory(t) for t in bob], await OLD.embed(bob))
    ids = {t: m.id for t, m in zip(TOPICS, added, strict=True)}
    await store.memories.forget(ALICE, ids["jazz"], by="ai")
    await store.memories.delete(ALICE, ids["opera"])
    return ids


async def _assert_all_new(store: Store, user: UserRef) -> None:
    """Every stored vector of ``user`` (forgotten ones included) is the new model's vector of its text."""
    rows = await store.index.list(user, MemoryFilter(include_deleted=True))
    for m in rows:
        stored = (await store.memories.get(user, m.id)).embedding
        assert stored is not None and stored.shape == (NEW.dim,)
        assert float(np.dot(stored, (await NEW.embed([m.content]))[0])) == pytest.approx(1.0, abs=1e-5)


async def test_reembed_switches_model_and_dimension(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    store = await _open(request, tmp_path, backend, OLD)
    ids = await _fill(store)
    await store.close()
    reembedder = await open_reembed()

    result = await reembed(reembedder, NEW, batch=4)
    assert (result.embedder, result.dim, result.from_embedder, result.from_dim) == ("hash:256", 256, "hash:384", 384)
    assert result.vectors == 14 and result.batches == 4 and result.switched  # 11 of alice's (one forgotten), 3 of bob's
    await reembedder.aclose()

    with pytest.raises(ConfigError, match=r"256-d vectors from the embedder 'hash:256'|256-d vectors from 'hash:256'"):
        await _open(request, tmp_path, backend, OLD)
    store = await _open(request, tmp_path, backend, NEW)
    try:
        hits = await store.index.nearest(ALICE, (await NEW.embed(["fond of chess"]))[0], 3)
        assert hits[0].memory.id == ids["chess"] and len(hits) == 3
        forgotten = await store.index.nearest(ALICE, (await NEW.embed(["fond of jazz"]))[0], 20)
        assert len(forgotten) == 10 and ids["jazz"] not in {h.memory.id for h in forgotten}
        restored = await store.memories.restore(ALICE, ids["jazz"])
        assert restored.is_active
        hits = await store.index.nearest(ALICE, (await NEW.embed(["alice is fond of jazz"]))[0], 1)
        assert hits[0].memory.id == ids["jazz"] and hits[0].score == pytest.approx(1.0, abs=1e-4)
        await _assert_all_new(store, ALICE)
        await _assert_all_new(store, BOB)
        kites = await store.memories.add(ALICE, NewMemory("kites"), (await NEW.embed(["kites"]))[0])  # new-model writes
        assert (await store.index.nearest(ALICE, (await NEW.embed(["kites"]))[0], 1))[0].memory.id == kites.id
    finally:
        await store.close()


async def test_an_interrupted_run_refuses_normal_use_then_resumes_without_recomputing(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    store = await _open(request, tmp_path, backend, OLD)
    await _fill(store)
    await store.close()
    reembedder = await open_reembed()
    first = CountingEmbedder(256)

    def stop_after_two(rows: int, batches: int) -> None:
        if batches == 2:
            raise Stop

    with pytest.raises(Stop):
        await reembed(reembedder, first, batch=3, on_batch=stop_after_two)
    state = await reembedder.state()
    assert (state.target, state.target_dim, state.staged, state.total) == ("hash:256", 256, 6, 14)
    assert (state.embedder, state.dim) == ("hash:384", 384)  # the live vectors are still the old model's
    for embedder in (OLD, NEW):  # neither model may use the store half-way
        with pytest.raises(
            ReembedInProgress, match=r"a reembed .* to 'hash:256' \(256-d\) is in progress: run `memstack reembed`"
        ):
            await _open(request, tmp_path, backend, embedder)

    second = CountingEmbedder(256)
    result = await reembed(reembedder, second, batch=3)
    assert (result.vectors, result.resumed, result.batches) == (8, 6, 3)
    assert not set(first.texts[:6]) & set(second.texts)  # nothing staged was embedded again
    assert len(first.texts[:6]) + len(second.texts) == 14
    again = await reembed(reembedder, NEW, batch=3)  # idempotent: already on the target
    assert (again.switched, again.vectors, again.batches) == (False, 0, 0)
    store = await _open(request, tmp_path, backend, NEW)
    try:
        await _assert_all_new(store, ALICE)
        await _assert_all_new(store, BOB)
    finally:
        await store.close()


async def test_rows_written_meanwhile_by_an_older_process_end_up_with_new_vectors(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    older = await _open(request, tmp_path, backend, OLD)  # opened before the reembed began: it may still write
    try:
        ids = await _fill(older)
        reembedder = await open_reembed()

        def stop(rows: int, batches: int) -> None:
            raise Stop

        with pytest.raises(Stop):
            await reembed(reembedder, NEW, batch=4, on_batch=stop)  # stages the first 4 rows (alice's tea..violin)
        await older.memories.add(ALICE, NewMemory("alice is fond of kites"), (await OLD.embed(["kites"]))[0])
        edited = "alice is no longer fond of tea but of coffee"
        await older.memories.update(ALICE, ids["tea"], MemoryPatch(content=edited), (await OLD.embed([edited]))[0])
    finally:
        await older.close()
    result = await reembed(reembedder, NEW, batch=4)
    assert (result.vectors, result.batches) == (12, 4)  # 11 never staged (kites among them), then the edited one
    store = await _open(request, tmp_path, backend, NEW)
    try:
        await _assert_all_new(store, ALICE)
        assert (await store.memories.get(ALICE, ids["tea"])).content == edited
    finally:
        await store.close()


async def test_a_second_run_is_locked_out_and_abort_goes_back(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    store = await _open(request, tmp_path, backend, OLD)
    await _fill(store)
    await store.close()
    reembedder = await open_reembed()
    with pytest.raises(StoreBusy, match="another `memstack reembed` is running"):
        await open_reembed()

    def stop(rows: int, batches: int) -> None:
        raise Stop

    with pytest.raises(Stop):
        await reembed(reembedder, NEW, batch=5, on_batch=stop)
    with pytest.raises(ConfigError, match="`memstack reembed --abort`"):
        await reembed(reembedder, get_embedder("hash:128"))  # another target while one is in progress
    before = await abort(reembedder)
    assert (before.target, before.staged) == ("hash:256", 5)
    state = await reembedder.state()
    assert (state.target, state.staged, state.embedder) == (None, 0, "hash:384")
    await reembedder.aclose()
    store = await _open(request, tmp_path, backend, OLD)  # usable again with the old model
    try:
        hits = await store.index.nearest(ALICE, (await OLD.embed(["fond of rust"]))[0], 1)
        assert hits[0].memory.content == "alice is fond of rust"
    finally:
        await store.close()
    again = await open_reembed()  # the lock went with the first handle
    assert (await again.state()).target is None


async def test_an_empty_store_switches_at_once(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    store = await _open(request, tmp_path, backend, OLD)
    await store.close()
    result = await reembed(await open_reembed(), NEW)
    assert (result.vectors, result.batches, result.switched, result.from_dim) == (0, 0, True, 384)
    store = await _open(request, tmp_path, backend, NEW)
    await store.close()


async def test_postgres_switch_changes_the_column_type_and_rebuilds_hnsw_indexes(postgres_url: str) -> None:
    import psycopg

    from memstack.store.postgres import AnnSettings, PostgresStore
    from memstack.store.postgres.reembed import PgReembed
    from memstack.store.vectors.hnsw import index_name

    texts = [f"alice note {i} about {TOPICS[i % len(TOPICS)]}" for i in range(60)]
    store = await PostgresStore.open(postgres_url, dim=384, embedder=OLD.name, ann=AnnSettings(threshold=50))
    try:
        await store.memories.add_many(ALICE, [NewMemory(t) for t in texts], await OLD.embed(texts))
        await store.vectors.indexes.drain()
        assert await store.vectors.indexes.lookup(ALICE) == index_name(ALICE)
    finally:
        await store.close()
    async with await PgReembed.open(postgres_url) as handle:
        assert (await reembed(handle, NEW, batch=25)).vectors == 60
    async with await psycopg.AsyncConnection.connect(postgres_url) as conn:
        cur = await conn.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
        )
        assert await cur.fetchone() == ("vector(256)",)
        cur = await conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (index_name(ALICE),))
        row = await cur.fetchone()
        assert row is not None and "hnsw" in row[0] and "vector_cosine_ops" in row[0]
    store = await PostgresStore.open(postgres_url, dim=256, embedder=NEW.name, ann=AnnSettings(threshold=50))
    try:
        query = (await NEW.embed([texts[7]]))[0]
        assert index_name(ALICE) in await store.index.explain_nearest(ALICE, query, 10)
        hits = await store.index.nearest(ALICE, query, 10)
        assert len(hits) == 10 and hits[0].memory.content == texts[7]
    finally:
        await store.close()


async def test_every_table_holding_vectors_is_reembedded(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A new table with a vector column must join its backend's VECTOR_TABLES, or a reembed would leave it behind."""
    store = await _open(request, tmp_path, backend, OLD)
    await store.close()
    if backend == "postgres":
        import psycopg

        from memstack.store.postgres.reembed import VECTOR_TABLES

        async with await psycopg.AsyncConnection.connect(request.getfixturevalue("postgres_url")) as conn:
            cur = await conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE udt_name = 'vector' AND table_schema = current_schema()"
            )
            columns = {(str(t), str(c)) for t, c in await cur.fetchall()}
    else:
        import sqlite3

        from memstack.store.sqlite.reembed import VECTOR_TABLES

        with sqlite3.connect(tmp_path / "memstack.db") as conn:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            columns = {
                (t, str(c[1]))
                for t in tables
                for c in conn.execute(f"PRAGMA table_info('{t}')")
                if str(c[2]).upper() == "BLOB" and "embedding" in str(c[1])
            }
    assert columns - {("reembed_vectors", "embedding")} == {(t.name, t.vector_column) for t in VECTOR_TABLES}


async def test_a_process_left_open_across_the_switch_gets_a_clear_error(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    older = await _open(request, tmp_path, backend, OLD)  # a server still running on the old model
    try:
        await _fill(older)
        query = (await OLD.embed(["fond of chess"]))[0]
        assert await older.index.nearest(ALICE, query, 3)
        reembedder = await open_reembed()
        assert (await reembed(reembedder, NEW, batch=8)).switched
        with pytest.raises(ConfigError, match=r"`memstack reembed`.*MEMSTACK_EMBEDDER"):
            await older.index.nearest(ALICE, query, 3)
        with pytest.raises(ConfigError, match=r"`memstack reembed`.*MEMSTACK_EMBEDDER"):
            await older.memories.add(ALICE, NewMemory("kites"), (await OLD.embed(["kites"]))[0])
    finally:
        await older.close()


async def test_archived_message_vectors_are_reembedded_with_their_speakers(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, open_reembed: Opener
) -> None:
    """recall's ``archive_vectors``: each message's new vector embeds "Speaker: text" as recall does; a blank
    message stays without one."""
    from datetime import UTC, datetime

    from memstack.recall.index import message_text
    from memstack.types import ArchivedTurn, TurnCommit, TurnStatus, TurnSummary, TurnVectors

    store = await _open(request, tmp_path, backend, OLD)
    at = datetime(2024, 6, 1, tzinfo=UTC)
    for turn, (said, reply) in enumerate([("We went to Porto", "Lovely city"), ("And then Braga", "")], start=1):
        state = await store.sessions.open(ALICE, "trip")
        await store.sessions.record(ALICE, ArchivedTurn("trip", turn, said, reply, at))
        commit = TurnCommit(turn, TurnStatus.SUMMARIZED, TurnSummary(turn, "said", "replied"), (), state.version)
        await store.sessions.commit(ALICE, "trip", commit)
    old = await OLD.embed(["Ann: We went to Porto", "Lovely city", "Ann: And then Braga"])
    await store.archive_vectors.put(
        ALICE, [TurnVectors("trip", 1, old[0], old[1], "Ann"), TurnVectors("trip", 2, old[2], None, "Ann")]
    )
    await store.close()
    reembedder = await open_reembed()
    result = await reembed(reembedder, NEW, batch=2)
    assert result.switched and result.vectors == 3
    await reembedder.aclose()
    store = await _open(request, tmp_path, backend, NEW)
    try:
        messages = await store.archive_vectors.messages(ALICE)
        assert [m.id for m in messages] == ["trip:1:user", "trip:1:assistant", "trip:2:user"]
        for m in messages:
            expected = (await NEW.embed([message_text(m.text, m.speaker)]))[0]
            assert m.embedding is not None and float(np.dot(m.embedding, expected)) == pytest.approx(1.0, abs=1e-5)
    finally:
        await store.close()
