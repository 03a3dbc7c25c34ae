"""After an erasure nothing the user said is left in any file of a SQLite store (issue 24): not in the database (its
pages and free space), not in the write-ahead log, not in the full-text indexes' segments, also when the process
serving the store was killed before the erasure could empty the log, once the store is opened again.

Each check writes a user whose words appear nowhere else (``SECRET``, whose stem is itself, so the full-text
indexes hold it whole), beside a user whose own word must still be found (the scan reads what it should), erases
the user, and reads the raw bytes of ``memstack.db``, ``memstack.db-wal`` and ``memstack.db-shm``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstack.engine import AsyncMemstack
from memstack.store.sqlite import SQLiteStore
from memstack.types import UserRef

SECRET = b"zqxvorblatt"
USER_ID = b"erased-kq7w"
KEPT = b"plimsolvant"
ERASED = UserRef(USER_ID.decode(), tenant="acme")
KEPT_USER = UserRef("kept-user", tenant="acme")


def _store_bytes(home: Path) -> dict[str, bytes]:
    """Every file of the store, lower-cased (stems are lower case, texts as written)."""
    files = sorted(home.glob("memstack.db*"))
    assert home / "memstack.db" in files
    return {f.name: f.read_bytes().lower() for f in files}


def _traces(home: Path, *words: bytes) -> dict[str, list[str]]:
    return {name: [w.decode() for w in words if w in data] for name, data in _store_bytes(home).items()}


def _clean(found: dict[str, list[str]]) -> bool:
    return not any(found.values())


async def test_an_erased_users_words_are_in_no_file_of_the_store(tmp_path: Path) -> None:
    start = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    said = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text, "at": start + timedelta(minutes=i)}
        for i, text in enumerate(
            [
                f"My grandmother's word for a teapot was {SECRET.decode()}.",
                "What a lovely word.",
                f"I still say {SECRET.decode()} every morning.",
                "Then the word lives on.",
            ]
        )
    ]
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
        for user, word in ((ERASED, SECRET), (KEPT_USER, KEPT)):
            memory = await ms.add(user, f"Calls a teapot a {word.decode()}", category="preference")
            await ms.edit(user, memory.id, content=f"Calls every teapot a {word.decode()}")  # the old text rewritten
            await ms.ingest(user, "family", said if user == ERASED else [{**m, "content": KEPT.decode()} for m in said])
            await ms.chat(user, f"Remember that {word.decode()} means teapot.")
        await ms.wait_idle()
        assert _traces(tmp_path, SECRET)["memstack.db-wal"] == [SECRET.decode()]  # written: the scan finds it
        await ms.erase(ERASED)
        found = _traces(tmp_path, SECRET, USER_ID)
        assert _clean(found), f"the erased user's words are still in {found}"
        assert await ms.store.search_index.search_text(KEPT_USER, KEPT.decode(), 5) != []
    assert _clean(_traces(tmp_path, SECRET, USER_ID))
    assert any(KEPT in data for data in _store_bytes(tmp_path).values())


#: A serving process: writes the user, erases them while a reader (the test) keeps the log from being emptied, says
#: so, and waits to be killed.
_SERVING = textwrap.dedent(
    """
    import asyncio, sys
    import numpy as np
    from memstack.store.sqlite import SQLiteStore
    from memstack.types import ArchivedTurn, NewMemory, UserRef
    from datetime import UTC, datetime

    async def main(path, secret, user_id):
        store = await SQLiteStore.open(path, dim=8, embedder="test:8", busy_timeout_s=0.2)
        user = UserRef(user_id, tenant="acme")
        vectors = np.eye(8, dtype=np.float32)[:2]
        await store.memories.add_many(user, [NewMemory(f"Says {secret}"), NewMemory(f"Dreams of {secret}")], vectors)
        held = await store.sessions.acquire(user, "s")
        await store.sessions.open(user, "s")
        turn = ArchivedTurn("s", 1, f"I said {secret}", "ok", datetime(2024, 1, 1, tzinfo=UTC))
        await store.sessions.record(user, turn, lease=held.lease)
        await held.release()
        print("written", flush=True)
        sys.stdin.readline()
        await store.users.erase(user)
        print("erased", flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main(*sys.argv[1:]))
    """
)


def test_a_process_killed_before_it_emptied_the_log_leaves_nothing_after_a_restart(tmp_path: Path) -> None:
    """The serving process erases the user while a reader holds a snapshot from before, so the log cannot be
    emptied yet; it is killed (-9) then. The store opened again finishes the erasure's purge. (The reader stays
    connected throughout: the last connection to close would empty the log on its own, which a server that keeps
    running never does.)"""
    path = tmp_path / "memstack.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVING, str(path), SECRET.decode(), USER_ID.decode()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    reader: sqlite3.Connection | None = None
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "written"
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM memories").fetchone()  # a snapshot from before the erasure
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "erased"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        reader.execute("ROLLBACK")
        assert not _clean(_traces(tmp_path, SECRET))  # killed with the erased text still in the log

        async def restart() -> None:
            store = await SQLiteStore.open(path, dim=8, embedder="test:8")
            await store.close()

        asyncio.run(restart())
        found = _traces(tmp_path, SECRET, USER_ID)
        assert _clean(found), f"after the restart the erased user's words are still in {found}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if reader is not None:
            reader.close()
