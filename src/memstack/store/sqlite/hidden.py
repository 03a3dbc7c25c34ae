"""The SQLite store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`, where the
reads and writes both backends share are). Here: the table, :data:`HIDDEN_TURN` (which the archive's search embeds
in its SQL), and ``mentions`` with FTS5.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memstack.store._fulltext import fts5_match
from memstack.store._hidden import HiddenReads, parse_turn_ids
from memstack.store._session_rows import TURN_COLUMNS, check_page, turn_from_row
from memstack.store.sqlite._core import Core, user_key
from memstack.store.sqlite._rows import fts_owner, to_ts
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import ArchivedTurn, UserRef

__all__ = ["HIDDEN_TURN", "SQLiteHidden", "migrate_hidden_items"]


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


class SQLiteHidden(HiddenReads):
    """:class:`~memstack.store._hidden.HiddenReads`, and what a forget looks at found with FTS5."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))
        self._core = core

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


def _turn(row: Sequence[Any]) -> ArchivedTurn:
    return turn_from_row(row, when=datetime.fromisoformat, flags=json.loads)
