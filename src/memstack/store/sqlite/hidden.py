"""The SQLite store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`, where the reads
and writes both backends share are; its table is in :mod:`memstack.store._tables`). Here: :data:`HIDDEN_TURN` (which the
archive's search embeds in its SQL), and the exchanges holding a term found with FTS5."""

from __future__ import annotations

import builtins
from typing import Any

from memstack.store._fulltext import fts5_match
from memstack.store._hidden import HiddenReads
from memstack.store._session_rows import TURN_COLUMNS
from memstack.store.sqlite._core import Core
from memstack.store.sqlite._rows import fts_owner
from memstack.store.sqlite._sql import SQLiteSql
from memstack.types import UserRef

__all__ = ["HIDDEN_TURN", "SQLiteHidden"]


#: True for a row of ``session_turns t`` that a forgotten memory hides.
HIDDEN_TURN = (
    "EXISTS (SELECT 1 FROM hidden_items h WHERE h.tenant = t.tenant AND h.user_id = t.user_id "
    "AND h.session_id = (SELECT id FROM sessions WHERE pk = t.session_pk) AND h.kind = 'turn' AND h.turn = t.turn)"
)


class SQLiteHidden(HiddenReads):
    """:class:`~memstack.store._hidden.HiddenReads`, the exchanges holding a term found with FTS5."""

    def __init__(self, core: Core) -> None:
        super().__init__(SQLiteSql(core))

    def _holding(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, builtins.list[Any]]:
        return (
            f"SELECT {TURN_COLUMNS}, t.pk FROM session_turns_fts JOIN session_turns t "
            "ON t.pk = session_turns_fts.rowid JOIN sessions s ON s.pk = t.session_pk "
            "WHERE session_turns_fts MATCH ? AND t.tenant = ? AND t.user_id = ?",
            [fts5_match(fts_owner(user), terms, any_word=True), user.tenant, user.user_id],
        )
