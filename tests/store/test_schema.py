"""The tables both backends hold are written once (``store/_tables.py``) and rendered in each dialect: a fresh store
of either backend has each of them with the same columns in the same order, but for the columns one dialect alone
declares (``[sqlite: …]`` / ``[postgres: …]``), and with the dialect's types."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import psycopg
import pytest

from memstack.store import _tables
from memstack.store._tables import POSTGRES, SQLITE, render
from memstack.store.postgres import PostgresStore
from memstack.store.sqlite import SQLiteStore

from .conftest import DIM, EMBEDDER

#: Every shared statement (the ``_tables`` constants that are tuples of DDL).
SHARED = [s for name in _tables.__all__ if isinstance(getattr(_tables, name), tuple) for s in getattr(_tables, name)]

#: The columns only one dialect has, by table (on PostgreSQL, also what ``0013_archive_search`` added for ranking a
#: user's archive in the database, and the ``tsv`` that ``0012_fulltext_terms`` dropped).
ONLY = {
    "sqlite": {"session_turns": {"fts_owner"}, "user_erasures": {"purged"}},
    "postgres": {
        "context_manifests": {"seq"},
        "archive_vectors": {"session_seq", "turn", "at", "term_ids", "n_terms", "prev_seq", "key_len"},
    },
}


def _created() -> list[str]:
    return sorted({m for s in SHARED for m in re.findall(r"CREATE TABLE (\w+)", s)})


@pytest.mark.parametrize("dialect", [SQLITE, POSTGRES], ids=lambda d: d.name)
def test_every_word_of_the_shared_ddl_is_spelt_in_both_dialects(dialect: _tables.Dialect) -> None:
    for statement in render(SHARED, dialect, dim=DIM):
        assert not re.search(r"\{\w+\}|\[(sqlite|postgres):", statement), statement


def test_the_shared_ddl_creates_every_shared_table_on_sqlite(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "plain.db")
    conn.execute("CREATE TABLE memories (pk INTEGER PRIMARY KEY)")  # what the shared ALTERs change
    for statement in render(SHARED, SQLITE):
        conn.execute(statement)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert set(_created()) <= names


@pytest.mark.postgres
async def test_both_backends_hold_the_shared_tables_alike(tmp_path: Path, postgres_url: str) -> None:
    await (await SQLiteStore.open(tmp_path / "m.db", dim=DIM, embedder=EMBEDDER)).close()
    await (await PostgresStore.open(postgres_url, dim=DIM, embedder=EMBEDDER)).close()
    conn = sqlite3.connect(tmp_path / "m.db")
    async with await psycopg.AsyncConnection.connect(postgres_url) as pg:
        for table in _created():
            lite = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
            cur = await pg.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' "
                "AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
            post = [str(r[0]) for r in await cur.fetchall()]
            assert lite and post, table
            lite = [c for c in lite if c not in ONLY["sqlite"].get(table, set())]
            post = [c for c in post if c not in ONLY["postgres"].get(table, set())]
            # the integer key is spelt pk on SQLite and seq on PostgreSQL (and so are references to it)
            assert [re.sub(r"pk$", "seq", c) for c in lite] == [re.sub(r"pk$", "seq", c) for c in post], table
