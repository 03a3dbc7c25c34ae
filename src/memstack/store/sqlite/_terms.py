"""Migration ``012_fulltext_terms``: full text indexed from stems computed in Python (:mod:`memstack.store._fulltext`).

Before it, ``memories_fts`` and ``session_turns_fts`` let FTS5's ``porter unicode61`` tokenizer stem the raw text,
and ``bm25()`` ranked with statistics of the whole file (every user's rows). After it:

- ``memories`` and ``session_turns`` hold ``terms`` (the stems, space-joined) and ``n_terms`` (their count);
- ``memories_fts`` and ``session_turns_fts`` index ``terms`` with the ``ascii`` tokenizer (splitting at the spaces
  only, stemming nothing) beside the one-token owner of the row (``fts_owner``, the user's postings);
- triggers keep them in step with deletes and with changes of ``terms``; inserts give the row's terms themselves
  (a memory's are written with it, an exchange's by a trigger from its row);
- ranking is BM25 over the user's own rows, in Python (:func:`memstack.store._fulltext.rank`).

Existing rows are converted in batches of :data:`BATCH` inside the migration's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from memstack.store._fulltext import exchange_terms, text_terms

__all__ = ["BATCH", "migrate_fulltext_terms"]

#: Rows converted per statement batch.
BATCH = 1000


def _backfill(conn: sqlite3.Connection, table: str, columns: str, terms_of: Callable[..., list[str]]) -> None:
    last = 0
    while True:
        rows = conn.execute(f"SELECT pk, {columns} FROM {table} WHERE pk > ? ORDER BY pk LIMIT ?", (last, BATCH))
        batch = rows.fetchall()
        if not batch:
            return
        updates = []
        for pk, *texts in batch:
            terms = terms_of(*texts)
            updates.append((" ".join(terms), len(terms), pk))
        conn.executemany(f"UPDATE {table} SET terms = ?, n_terms = ? WHERE pk = ?", updates)
        last = int(batch[-1][0])


def migrate_fulltext_terms(conn: sqlite3.Connection) -> None:
    """Migration ``012_fulltext_terms`` (separate statements: ``executescript`` would commit half-way)."""
    for table in ("memories", "session_turns"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN terms TEXT NOT NULL DEFAULT ''")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN n_terms INTEGER NOT NULL DEFAULT 0")
    for trigger in ("memories_fts_delete", "memories_fts_update", "session_turns_fts_insert"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TRIGGER session_turns_fts_delete")
    conn.execute("DROP TABLE memories_fts")
    conn.execute("DROP TABLE session_turns_fts")
    _backfill(conn, "memories", "content", text_terms)
    _backfill(conn, "session_turns", "user_text, assistant_text", exchange_terms)
    for table in ("memories", "session_turns"):
        conn.execute(
            f"CREATE VIRTUAL TABLE {table}_fts USING fts5("
            f"terms, fts_owner, content='{table}', content_rowid='pk', tokenize='ascii')"
        )
        conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('rebuild')")
        conn.execute(
            f"""
            CREATE TRIGGER {table}_fts_delete AFTER DELETE ON {table} BEGIN
                INSERT INTO {table}_fts ({table}_fts, rowid, terms, fts_owner)
                VALUES ('delete', old.pk, old.terms, old.fts_owner);
            END
            """
        )
        conn.execute(
            f"""
            CREATE TRIGGER {table}_fts_update AFTER UPDATE OF terms ON {table} BEGIN
                INSERT INTO {table}_fts ({table}_fts, rowid, terms, fts_owner)
                VALUES ('delete', old.pk, old.terms, old.fts_owner);
                INSERT INTO {table}_fts (rowid, terms, fts_owner) VALUES (new.pk, new.terms, new.fts_owner);
            END
            """
        )
    # A memory's terms are indexed with its insert (``SQLiteMemories``, a batch at a time); an exchange's here.
    conn.execute(
        """
        CREATE TRIGGER session_turns_fts_insert AFTER INSERT ON session_turns BEGIN
            INSERT INTO session_turns_fts (rowid, terms, fts_owner) VALUES (new.pk, new.terms, new.fts_owner);
        END
        """
    )
