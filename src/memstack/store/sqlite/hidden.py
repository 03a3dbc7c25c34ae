"""The SQLite store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`).

The writes are helpers the memory writes call inside their own transaction (:func:`hide_rows`,
:func:`unhide_rows`), so a forget and what it hides are one commit. The reads of other roles call
:func:`session_hidden` (one session's items) or embed :data:`HIDDEN_TURN` in their SQL.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memstack.store._fulltext import fts5_match
from memstack.store._hidden import HIDDEN_COLUMNS, hidden_from_row, hidden_rows, parse_turn_ids
from memstack.store._session_rows import TURN_COLUMNS, check_page, facts_from_json, turn_from_row
from memstack.store.sqlite._core import Core, user_key
from memstack.store.sqlite._rows import fts_owner, to_ts
from memstack.types import ArchivedTurn, Fact, HiddenItem, UserRef, utcnow

__all__ = [
    "HIDDEN_TURN",
    "SQLiteHidden",
    "hidden_turns",
    "hide_rows",
    "migrate_hidden_items",
    "session_hidden",
    "unhide_rows",
]


def migrate_hidden_items(conn: sqlite3.Connection) -> None:
    """Migration ``017_hidden_items``. ``AUTOINCREMENT``: a key is never used twice, so the user's
    ``(count, max key)`` changes with every hide and restore (``version``)."""
    conn.execute(
        """
        CREATE TABLE hidden_items (
            pk INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('turn', 'fact', 'line')),
            session_id TEXT NOT NULL,
            turn INTEGER NOT NULL DEFAULT 0,
            text TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX hidden_items_by_session ON hidden_items (tenant, user_id, session_id, kind, turn)")
    conn.execute("CREATE INDEX hidden_items_by_memory ON hidden_items (tenant, user_id, memory_id)")


#: True for a row of ``session_turns t`` that a forgotten memory hides.
HIDDEN_TURN = (
    "EXISTS (SELECT 1 FROM hidden_items h WHERE h.tenant = t.tenant AND h.user_id = t.user_id "
    "AND h.session_id = (SELECT id FROM sessions WHERE pk = t.session_pk) AND h.kind = 'turn' AND h.turn = t.turn)"
)


def hide_rows(conn: sqlite3.Connection, user: UserRef, memory_id: str, items: Sequence[HiddenItem]) -> int:
    """Database thread, inside a write transaction: record ``items`` as hidden by ``memory_id``."""
    rows = hidden_rows(memory_id, items)
    stamp = to_ts(utcnow())
    conn.executemany(
        "INSERT INTO hidden_items (tenant, user_id, memory_id, kind, session_id, turn, text, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(*user_key(user), *row, stamp) for row in rows],
    )
    return len(rows)


def unhide_rows(conn: sqlite3.Connection, user: UserRef, memory_id: str) -> int:
    """Database thread, inside a write transaction: show again what ``memory_id`` hid."""
    cur = conn.execute(
        "DELETE FROM hidden_items WHERE tenant = ? AND user_id = ? AND memory_id = ?", (*user_key(user), memory_id)
    )
    return cur.rowcount


def hidden_turns(conn: sqlite3.Connection, user: UserRef) -> list[tuple[str, int]]:
    """Database thread: the user's hidden exchanges, ``(session_id, turn)``."""
    rows = conn.execute(
        "SELECT DISTINCT session_id, turn FROM hidden_items WHERE tenant = ? AND user_id = ? AND kind = 'turn'",
        user_key(user),
    )
    return [(str(sid), int(turn)) for sid, turn in rows]


def session_hidden(conn: sqlite3.Connection, user: UserRef, session_id: str) -> list[HiddenItem]:
    """Database thread: what is hidden of one session."""
    rows = conn.execute(
        f"SELECT {HIDDEN_COLUMNS} FROM hidden_items WHERE tenant = ? AND user_id = ? AND session_id = ?",
        (*user_key(user), session_id),
    )
    return [hidden_from_row(r) for r in rows]


class SQLiteHidden:
    """Reads of ``hidden_items`` and of what a forget looks at; every statement on the database thread."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def hidden(self, user: UserRef, *, memory_id: str | None = None) -> builtins.list[HiddenItem]:
        sql = f"SELECT {HIDDEN_COLUMNS} FROM hidden_items WHERE tenant = ? AND user_id = ?"
        args: builtins.list[Any] = [*user_key(user)]
        if memory_id is not None:
            sql += " AND memory_id = ?"
            args.append(memory_id)
        sql += " ORDER BY pk"
        return await self._core.run(lambda conn: [hidden_from_row(r) for r in conn.execute(sql, args)])

    async def version(self, user: UserRef) -> tuple[int, int]:
        sql = "SELECT count(*), coalesce(max(pk), 0) FROM hidden_items WHERE tenant = ? AND user_id = ?"
        row = await self._core.run(lambda conn: conn.execute(sql, user_key(user)).fetchone())
        return (int(row[0]), int(row[1]))

    async def mentions(
        self,
        user: UserRef,
        terms: Sequence[str],
        *,
        turn_ids: Sequence[str] = (),
        said_at: Sequence[datetime] = (),
        limit: int = 1000,
    ) -> builtins.list[ArchivedTurn]:
        check_page(limit)
        named = parse_turn_ids(turn_ids)
        times = sorted({to_ts(when) for when in said_at})
        base = f"SELECT {TURN_COLUMNS}, t.pk FROM session_turns t JOIN sessions s ON s.pk = t.session_pk "

        def run(conn: sqlite3.Connection) -> builtins.list[ArchivedTurn]:
            found: dict[int, tuple[Any, ...]] = {}
            if terms:
                match = fts5_match(fts_owner(user), list(terms), any_word=True)
                rows = conn.execute(
                    f"SELECT {TURN_COLUMNS}, t.pk FROM session_turns_fts JOIN session_turns t "
                    "ON t.pk = session_turns_fts.rowid JOIN sessions s ON s.pk = t.session_pk "
                    "WHERE session_turns_fts MATCH ? AND t.tenant = ? AND t.user_id = ? ORDER BY t.pk DESC LIMIT ?",
                    (match, *user_key(user), limit),
                )
                found.update((int(r[-1]), r) for r in rows)
            for session_id, turn in named:
                row = conn.execute(
                    base + "WHERE s.tenant = ? AND s.user_id = ? AND s.id = ? AND t.turn = ?",
                    (*user_key(user), session_id, turn),
                ).fetchone()
                if row is not None:
                    found[int(row[-1])] = row
            for stamp in times:
                rows = conn.execute(
                    base + "WHERE t.tenant = ? AND t.user_id = ? AND t.at = ?", (*user_key(user), stamp)
                )
                found.update((int(r[-1]), r) for r in rows)
            return [_turn(found[pk][:-1]) for pk in sorted(found, reverse=True)]

        return await self._core.run(run)

    async def session_texts(
        self, user: UserRef, session_ids: Sequence[str]
    ) -> builtins.list[tuple[str, str, tuple[Fact, ...]]]:
        wanted = sorted(set(session_ids))
        if not wanted:
            return []
        sql = (
            "SELECT id, line, base_truth FROM sessions WHERE tenant = ? AND user_id = ? "
            "AND id IN (SELECT value FROM json_each(?)) ORDER BY pk"
        )
        args = (*user_key(user), json.dumps(wanted))
        rows = await self._core.run(lambda conn: conn.execute(sql, args).fetchall())
        return [(str(sid), str(line), facts_from_json(facts)) for sid, line, facts in rows]


def _turn(row: Sequence[Any]) -> ArchivedTurn:
    return turn_from_row(row, when=datetime.fromisoformat, flags=json.loads)
