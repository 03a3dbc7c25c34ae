"""What both backends' ``ArchiveVectors`` share: argument checks, one row per message of an exchange, and the two
reads (:class:`ArchiveVectorReads`: a user's messages a page at a time, the exchanges still without vectors). Each
backend keeps its ``put`` (PostgreSQL keeps its search statistics current in the same transaction) and its
``search`` (SQLite ranks in memory, PostgreSQL in SQL)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TypeVar

from memstack.errors import InputError
from memstack.store._session_rows import TURN_COLUMNS, check_page, check_session_id, turn_from_row
from memstack.store._sql import Row, Sql
from memstack.types import MESSAGE_ROLES, ArchivedMessage, ArchivedTurn, TurnVectors, UserRef, Vector

__all__ = ["ArchiveVectorReads", "check_speaker", "message_rows", "not_archived"]

T = TypeVar("T")


def check_speaker(speaker: str | None) -> str | None:
    if speaker is None:
        return None
    if not isinstance(speaker, str) or not speaker.strip() or len(speaker) > 200 or not speaker.isprintable():
        raise InputError(f"a speaker name must be 1-200 printable characters or None, got {speaker!r}")
    return speaker.strip()


def message_rows(
    vectors: Sequence[TurnVectors], vector: Callable[[Vector], T]
) -> list[tuple[str, int, int, str | None, T | None]]:
    """``(session_id, turn, side, speaker, stored vector)`` for both messages of each exchange (side 0: the user's,
    1: the reply), checked; ``vector`` converts a vector to what the backend stores (``None`` stays ``None``)."""
    rows: list[tuple[str, int, int, str | None, T | None]] = []
    for v in vectors:
        check_session_id(v.session_id)
        if isinstance(v.turn, bool) or not isinstance(v.turn, int) or v.turn < 1:
            raise InputError(f"turn numbers start at 1, got {v.turn!r}")
        for side, (vec, speaker) in enumerate(((v.user, v.user_speaker), (v.assistant, v.assistant_speaker))):
            rows.append((v.session_id, v.turn, side, check_speaker(speaker), None if vec is None else vector(vec)))
    return rows


def not_archived(session_id: str, turn: int) -> InputError:
    return InputError(
        f"turn {turn} of session {session_id!r} is not in this user's archive; vectors are written for archived "
        "exchanges only, after the turn is recorded"
    )


class ArchiveVectorReads:
    """``messages`` and ``missing`` of :class:`~memstack.store.base.ArchiveVectors`, over a backend's
    :class:`~memstack.store._sql.Sql` (table ``archive_vectors``, its exchange named by ``turn_pk`` or
    ``turn_seq``: ``turn_`` and the backend's key)."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql
        key = sql.key
        self._messages = (
            "SELECT v.seq, s.id, t.turn, v.side, CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END, "
            f"t.at, v.speaker, v.embedding FROM archive_vectors v JOIN session_turns t ON t.{key} = v.turn_{key} "
            f"JOIN sessions s ON s.{key} = t.session_{key} "
            "WHERE v.tenant = ? AND v.user_id = ? AND v.seq > ? AND v.embedding IS NOT NULL ORDER BY v.seq LIMIT ?"
        )
        self._missing = (
            f"SELECT {TURN_COLUMNS} FROM session_turns t JOIN sessions s ON s.{key} = t.session_{key} "
            f"WHERE NOT EXISTS (SELECT 1 FROM archive_vectors v WHERE v.turn_{key} = t.{key}) ORDER BY t.{key} LIMIT ?"
        )

    async def messages(self, user: UserRef, *, after: int = 0, limit: int = 1000) -> builtins.list[ArchivedMessage]:
        check_page(limit, max(after, 0))
        return await self._sql.mapped(self._messages, (user.tenant, user.user_id, after, limit), self._message)

    async def missing(self, *, limit: int = 100) -> builtins.list[ArchivedTurn]:
        check_page(limit)
        return await self._sql.mapped(self._missing, (limit,), self._turn)

    def _message(self, row: Row) -> ArchivedMessage:
        seq, session_id, turn, side, text, at, speaker, embedding = row
        role, when, vector = MESSAGE_ROLES[int(side)], self._sql.when(at), self._sql.vector(embedding)
        return ArchivedMessage(int(seq), session_id, int(turn), role, text, when, speaker, vector)

    def _turn(self, row: Row) -> ArchivedTurn:
        return turn_from_row(row, when=self._sql.when, flags=self._sql.unjson)
