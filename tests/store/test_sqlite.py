"""What only the SQLite store promises: locking, migrations, error mapping, and its caches staying correct."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from memstack.errors import MigrationError, StoreBusy, StoreError, StoreUnavailable
from memstack.store.sqlite import SQLiteStore
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._db import Database
from memstack.store.sqlite._schema import MIGRATIONS
from memstack.types import Category, DeletedBy, MemoryFilter, MemoryPatch, NewMemory, UserRef

ALICE = UserRef("alice")
DIM = 16


def unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    m = rng.normal(size=(n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(11)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memstack.db"


async def open_store(path: Path, **kw: object) -> SQLiteStore:
    return await SQLiteStore.open(path, dim=DIM, embedder="test:random16", **kw)  # type: ignore[arg-type]


def run_python(code: str, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=60, **kw
    )


# -- one file, WAL, one writer ---------------------------------------------------------------------------------------


async def test_creates_one_wal_file_and_records_migrations(db_path: Path) -> None:
    async with await open_store(db_path) as store:
        assert store.path == db_path and db_path.exists()
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    applied = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY rowid")]
    assert applied == [name for name, _ in MIGRATIONS]
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta == {"embedder": "test:random16", "dim": "16"}
    conn.close()
    async with await open_store(db_path):  # reopening applies nothing twice
        pass
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT COUNT(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)
    conn.close()


async def test_a_writer_holding_the_lock_makes_writes_fail_with_store_busy(db_path: Path, rng) -> None:
    store = await open_store(db_path, busy_timeout_s=0.2)
    kept = await store.memories.add(ALICE, NewMemory("written before the lock"), unit(rng, 1)[0])
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusy, match=r"another process is writing to .*memstack\.db"):
            await store.memories.add(ALICE, NewMemory("blocked"), unit(rng, 1)[0])
        with pytest.raises(StoreBusy):
            await store.memories.forget(ALICE, kept.id, by=DeletedBy.USER)
        # readers are never blocked by a writer in WAL mode
        assert await store.index.count_active(ALICE) == 1
        assert (await store.index.nearest(ALICE, unit(rng, 1)[0], 3))[0].memory.id == kept.id
    finally:
        other.execute("ROLLBACK")
        other.close()
    await store.memories.add(ALICE, NewMemory("after the lock"), unit(rng, 1)[0])
    assert [m.content for m in await store.index.list(ALICE)] == ["after the lock", "written before the lock"]
    assert (await store.memories.get(ALICE, kept.id)).is_active
    await store.close()


def test_opening_waits_for_a_lock_another_process_holds_at_that_moment(db_path: Path) -> None:
    # A new file before its first open is a rollback-journal database; a process converting it to WAL, or
    # checkpointing as its last connection closes, holds it exclusively for a moment. Both connections the store
    # opens (the database thread's and the watch) wait for that moment instead of failing the start.
    db_path.parent.mkdir()
    holder = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.3, lambda: holder.execute("ROLLBACK"))
    release.start()
    core = Core(Database(db_path, busy_timeout_s=5), dim=DIM, embedder="test:random16", cache_mb=1)
    try:
        core.open_watch()
        assert core.watch_version() is not None
    finally:
        release.join()
        core.close_watch()
        holder.close()


async def test_a_writer_in_another_process_makes_writes_fail_with_store_busy(db_path: Path, rng) -> None:
    store = await open_store(db_path, busy_timeout_s=0.3)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE')\n"
            "print('locked', flush=True)\n"
            "sys.stdin.readline()\n"
            "c.execute('ROLLBACK')\n",
            str(db_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreBusy, match=str(db_path)):
            await store.memories.add(ALICE, NewMemory("blocked"), unit(rng, 1)[0])
    finally:
        holder.communicate("go\n", timeout=30)
    assert holder.returncode == 0
    await store.memories.add(ALICE, NewMemory("after the other process"), unit(rng, 1)[0])
    assert await store.index.count_active(ALICE) == 1
    await store.close()


async def test_writes_by_another_process_reach_a_warm_cache(db_path: Path, rng) -> None:
    store = await open_store(db_path)
    matrix = unit(rng, 40)
    await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(40)], matrix)
    query = unit(rng, 1)[0]
    assert len(await store.index.nearest(ALICE, query, 5)) == 5
    assert store.stats.cached_users == 1
    code = """
        import asyncio, sys
        import numpy as np
        from memstack.store.sqlite import SQLiteStore
        from memstack.types import NewMemory, UserRef

        async def main() -> None:
            store = await SQLiteStore.open(sys.argv[1], dim=16, embedder="test:random16")
            query = np.array([float(x) for x in sys.argv[2].split(",")], dtype=np.float32)
            memory = await store.memories.add(UserRef("alice"), NewMemory("from another process"), query)
            print(memory.id)
            await store.close()

        asyncio.run(main())
    """
    done = run_python(code, str(db_path), ",".join(str(float(x)) for x in query))
    assert done.returncode == 0, done.stderr
    foreign_id = done.stdout.strip()
    top = await store.index.nearest(ALICE, query, 1)
    assert top[0].memory.id == foreign_id and top[0].memory.content == "from another process"
    assert await store.index.count_active(ALICE) == 41
    await store.close()


# -- migrations and bad files ----------------------------------------------------------------------------------------


async def test_a_database_from_a_newer_memstack_is_refused(db_path: Path) -> None:
    async with await open_store(db_path):
        pass
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('999_from_the_future', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(MigrationError, match="newer memstack"):
        await open_store(db_path)


async def test_a_failing_migration_leaves_the_file_as_it_was(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE memories (unrelated TEXT)")  # someone else's table in the way
    conn.commit()
    conn.close()
    with pytest.raises(MigrationError, match="001_memories"):
        await open_store(db_path)
    conn = sqlite3.connect(db_path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == {"memories"}


async def test_a_file_that_is_not_a_database_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "memstack.db"
    path.write_bytes(b"this is not a database" * 200)
    with pytest.raises(StoreUnavailable, match="memstack database"):
        await open_store(path)


async def test_an_unusable_directory_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreUnavailable, match="MEMSTACK_HOME"):
        await open_store(tmp_path / "file" / "memstack.db")


async def test_a_closed_store_says_so(db_path: Path, rng) -> None:
    store = await open_store(db_path)
    await store.close()
    await store.close()  # twice is fine
    with pytest.raises(StoreError, match="closed"):
        await store.index.count_active(ALICE)
    with pytest.raises(StoreError, match="closed"):
        await store.index.nearest(ALICE, unit(rng, 1)[0], 1)


# -- full-text index -------------------------------------------------------------------------------------------------


async def test_full_text_index_stays_in_sync(db_path: Path, rng) -> None:
    async with await open_store(db_path) as store:
        a = await store.memories.add(ALICE, NewMemory("Has a cat called Miso"), unit(rng, 1)[0])
        batch = await store.memories.add_many(ALICE, [NewMemory(f"bulk note {i}") for i in range(5)], unit(rng, 5))
        await store.memories.update(ALICE, batch[0].id, MemoryPatch(content="renamed note"), unit(rng, 1)[0])
        await store.memories.forget(ALICE, batch[1].id, by=DeletedBy.AI)
        await store.memories.delete(ALICE, a.id)
    conn = sqlite3.connect(db_path)
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")  # raises if out of sync
    assert conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'miso'").fetchone()[0] == 0
    # The index holds the stems memstack computed (memstack.text), not the raw words.
    assert conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'renam'").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'renamed'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'bulk'").fetchone()[0] == 4
    conn.close()


# -- caches ----------------------------------------------------------------------------------------------------------


async def test_a_warm_search_does_not_use_the_database_thread(db_path: Path, rng) -> None:
    async with await open_store(db_path) as store:
        await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(100)], unit(rng, 100))
        assert store.stats.cached_users == 1  # a new user's bulk insert is written through to the cache
        calls = store.stats.database_calls
        await store.index.nearest(ALICE, unit(rng, 1)[0], 10)
        assert store.stats.database_calls == calls + 1  # one check that the commit it sees was our own
        calls = store.stats.database_calls
        for query in unit(rng, 20):
            assert len(await store.index.nearest(ALICE, query, 10)) == 10
        assert store.stats.database_calls == calls
        await store.memories.add(ALICE, NewMemory("one more"), unit(rng, 1)[0])
        calls = store.stats.database_calls
        for query in unit(rng, 5):
            await store.index.nearest(ALICE, query, 10)
        assert store.stats.database_calls == calls + 1  # again one check after our own write


async def test_the_vector_cache_keeps_within_its_budget(db_path: Path, rng) -> None:
    users = [UserRef(f"user-{i}") for i in range(6)]
    # ~55 KB per user of 100 memories (16-d vectors and the rows): a 0.12 MB budget holds two
    async with await open_store(db_path, cache_mb=0.12) as store:
        truth = {}
        for user in users:
            truth[user] = unit(rng, 100)
            added = await store.memories.add_many(
                user, [NewMemory(f"{user.user_id} {i}") for i in range(100)], truth[user]
            )
            truth[user] = (truth[user], [m.id for m in added])
        for _ in range(3):
            for user in users:
                query = unit(rng, 1)[0]
                hits = await store.index.nearest(user, query, 5)
                matrix, ids = truth[user]
                assert [h.memory.id for h in hits] == [ids[i] for i in np.argsort(-(matrix @ query))[:5]]
                assert 1 <= store.stats.cached_users <= 2 and store.stats.cached_bytes <= 0.12 * 1024 * 1024


async def test_a_user_larger_than_the_cache_is_still_searched_exactly(db_path: Path, rng) -> None:
    async with await open_store(db_path, cache_mb=0.001) as store:
        matrix = unit(rng, 200)
        added = await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(200)], matrix)
        query = unit(rng, 1)[0]
        hits = await store.index.nearest(ALICE, query, 7)
        assert [h.memory.id for h in hits] == [added[i].id for i in np.argsort(-(matrix @ query))[:7]]
        assert store.stats.cached_users == 0


async def test_a_large_user_is_scored_off_the_event_loop_and_exactly(tmp_path: Path, rng) -> None:
    # 6,000 x 384 floats is above the size that leaves the event loop
    async with await SQLiteStore.open(tmp_path / "big.db", dim=384, embedder="test:384") as store:
        matrix = unit(rng, 6000, 384)
        added = await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(6000)], matrix)
        for query in unit(rng, 3, 384):
            hits = await store.index.nearest(ALICE, query, 10, MemoryFilter(categories=(Category.GENERAL,)))
            assert [h.memory.id for h in hits] == [added[i].id for i in np.argsort(-(matrix @ query))[:10]]


async def test_nearest_with_a_text_filter(db_path: Path, rng) -> None:
    async with await open_store(db_path) as store:
        matrix = unit(rng, 30)
        contents = [f"note {i} about {'coffee' if i % 3 == 0 else 'tea'}" for i in range(30)]
        added = await store.memories.add_many(ALICE, [NewMemory(c) for c in contents], matrix)
        query = unit(rng, 1)[0]
        hits = await store.index.nearest(ALICE, query, 4, MemoryFilter(text="coffee"))
        want = [i for i in np.argsort(-(matrix @ query)) if i % 3 == 0][:4]
        assert [h.memory.id for h in hits] == [added[i].id for i in want]


async def test_random_writes_never_leave_the_cache_stale(db_path: Path, rng) -> None:
    """Model check: after every random write, ``nearest`` equals brute force over what should be active."""
    async with await open_store(db_path) as store:
        active: dict[str, tuple[np.ndarray, Category]] = {}
        forgotten: dict[str, tuple[np.ndarray, Category]] = {}
        cats = list(Category)
        for step in range(150):
            op = rng.choice(["add", "add", "update", "forget", "restore", "delete", "bulk"])
            if op == "add" or not active:
                vec, cat = unit(rng, 1)[0], cats[int(rng.integers(len(cats)))]
                memory = await store.memories.add(ALICE, NewMemory(f"step {step}", category=cat), vec)
                active[memory.id] = (vec, cat)
            elif op == "bulk":
                vecs = unit(rng, 3)
                added = await store.memories.add_many(ALICE, [NewMemory(f"bulk {step} {i}") for i in range(3)], vecs)
                active.update({m.id: (vecs[i], Category.GENERAL) for i, m in enumerate(added)})
            elif op == "update":
                memory_id = list(active)[int(rng.integers(len(active)))]
                vec, cat = unit(rng, 1)[0], cats[int(rng.integers(len(cats)))]
                await store.memories.update(ALICE, memory_id, MemoryPatch(content=f"moved {step}", category=cat), vec)
                active[memory_id] = (vec, cat)
            elif op == "forget":
                memory_id = list(active)[int(rng.integers(len(active)))]
                await store.memories.forget(ALICE, memory_id, by=DeletedBy.AI)
                forgotten[memory_id] = active.pop(memory_id)
            elif op == "restore" and forgotten:
                memory_id = next(iter(forgotten))
                await store.memories.restore(ALICE, memory_id)
                active[memory_id] = forgotten.pop(memory_id)
            elif op == "delete":
                memory_id = list(active)[int(rng.integers(len(active)))]
                await store.memories.delete(ALICE, memory_id)
                del active[memory_id]
            query = unit(rng, 1)[0]
            ids = list(active)
            scores = np.array([active[i][0] @ query for i in ids])
            want = [ids[i] for i in np.argsort(-scores, kind="stable")[:5]]
            got = await store.index.nearest(ALICE, query, 5)
            assert [h.memory.id for h in got] == want, f"step {step} after {op}"
            goal = [i for i in np.argsort(-scores, kind="stable") if active[ids[i]][1] == Category.GOAL][:3]
            got_goal = await store.index.nearest(ALICE, query, 3, MemoryFilter(categories=(Category.GOAL,)))
            assert [h.memory.id for h in got_goal] == [ids[i] for i in goal], f"step {step} after {op}"
            assert all(h.memory.is_active for h in got)


async def test_concurrent_searches_and_writes_agree(db_path: Path, rng) -> None:
    async with await open_store(db_path) as store:
        matrix = unit(rng, 50)
        await store.memories.add_many(ALICE, [NewMemory(f"m{i}") for i in range(50)], matrix)

        async def writer() -> None:
            for i in range(30):
                memory = await store.memories.add(ALICE, NewMemory(f"w{i}"), unit(rng, 1)[0])
                if i % 2:
                    await store.memories.forget(ALICE, memory.id, by=DeletedBy.AI)

        async def reader() -> None:
            for query in unit(rng, 60):
                hits = await store.index.nearest(ALICE, query, 10)
                assert len(hits) == 10 and all(h.memory.is_active for h in hits)

        await asyncio.gather(writer(), reader(), reader())
        assert await store.index.count_active(ALICE) == 65
