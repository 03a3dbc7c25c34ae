"""The PostgreSQL store's ``HiddenStore`` role: what forgotten memories hide (:mod:`memstack.store._hidden`, where the
reads and writes both backends share are; its table is in :mod:`memstack.store._tables`). Here: the exchanges holding a
term found by the stems' GIN index. Every statement names the tenant and the user (sharding by user)."""

from __future__ import annotations

import builtins
from typing import Any

from memstack.store._hidden import HiddenReads
from memstack.store._session_rows import TURN_COLUMNS
from memstack.store.postgres._db import Database
from memstack.store.postgres._sql import PgSql
from memstack.types import UserRef

__all__ = ["PgHidden"]


class PgHidden(HiddenReads):
    """:class:`~memstack.store._hidden.HiddenReads`, the exchanges holding a term found by the stems' GIN index."""

    def __init__(self, db: Database) -> None:
        super().__init__(PgSql(db))

    def _holding(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, builtins.list[Any]]:
        return (
            f"SELECT {TURN_COLUMNS}, t.seq FROM session_turns t JOIN sessions s ON s.seq = t.session_seq "
            "WHERE t.tenant = ? AND t.user_id = ? AND t.terms && ?::text[]",
            [user.tenant, user.user_id, terms],
        )
