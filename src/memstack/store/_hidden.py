"""What both backends share for hidden items (:class:`~memstack.store.base.HiddenStore`): the checks of what a
forget hides, the rows, and how a session's state leaves hidden things out.

Table ``hidden_items`` (SQLite migration ``017_hidden_items``, PostgreSQL ``0018_hidden_items``): one row per item
and the memory that hides it (``tenant, user_id, memory_id, kind, session_id, turn, text, created_at``), indexed by
``(tenant, user_id, session_id, kind, turn)`` (the reads of a session and of the archive) and by
``(tenant, user_id, memory_id)`` (a restore). Items are hidden by what they are, not copied and not changed:

- an exchange by its session and turn number: both messages, its turn-log entry, its vectors' place in recall;
- a fact by its session and its exact text: base truth is rewritten by every turn of the session, and a fact the
  summarizer keeps is the same text; a changed fact is a new text, derived from what the model could see;
- a line by its session and its exact text: a line rewritten from what is still visible has other words.

A session's state is read whole and then filtered here (:func:`visible_state`): one session's turns and facts are
what ``open`` reads anyway, so this adds one indexed read of the session's hidden items, never a scan of a user's
data. A commit keeps the hidden facts of base truth (:func:`keep_hidden_facts`): the turn's summarizer never saw
them, so it could not keep them itself, and a restore must find them where they were.

The role's reads are :class:`HiddenReads` on both backends, ``mentions`` (what a forget looks at) included; each
backend adds only how its full-text search finds the exchanges holding a term (:meth:`HiddenReads._holding`). The
writes are helpers the memory writes call inside their own transaction (:func:`hide_items`, :func:`unhide_items`),
so a forget and what it hides are one commit; other roles' reads call :func:`session_hidden` (one session's items)
or :func:`hidden_turns`.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from memstack.errors import InputError
from memstack.store._checks import utc
from memstack.store._session_rows import TURN_COLUMNS, check_page, check_session_id, facts_from_json, turn_from_row
from memstack.store._sql import Row, Sql, Tx
from memstack.types import ArchivedTurn, Fact, HiddenItem, HiddenKind, SessionState, UserRef, check_text, utcnow

__all__ = [
    "HIDDEN_COLUMNS",
    "MAX_HIDDEN",
    "HiddenReads",
    "check_hidden",
    "hidden_from_row",
    "hidden_rows",
    "hidden_turns",
    "hide_items",
    "keep_hidden_facts",
    "parse_turn_ids",
    "session_hidden",
    "unhide_items",
    "visible_state",
]

#: Columns of ``hidden_items`` that make a :class:`HiddenItem` (:func:`hidden_from_row`).
HIDDEN_COLUMNS = "memory_id, kind, session_id, turn, text"

#: Items one forget may hide (a memory said in thousands of exchanges is hidden in the newest of them).
MAX_HIDDEN = 5000


def check_hidden(memory_id: str, items: Sequence[HiddenItem]) -> list[HiddenItem]:
    """The items as one memory's (``memory_id`` set), each once; ``InputError`` for a malformed one."""
    if len(items) > MAX_HIDDEN:
        raise InputError(f"a forget hides at most {MAX_HIDDEN} items, got {len(items)}")
    out: dict[tuple[str, str, int, str], HiddenItem] = {}
    for item in items:
        kind = HiddenKind(item.kind)
        check_session_id(item.session_id)
        if kind is HiddenKind.TURN and item.turn < 1:
            raise InputError(f"a hidden exchange names its turn (1 or more), got {item.turn}")
        if kind is not HiddenKind.TURN:
            check_text(item.text, f"the hidden {kind.value}")
            if not item.text:
                raise InputError(f"a hidden {kind.value} names its text")
        text = "" if kind is HiddenKind.TURN else item.text
        clean = HiddenItem(kind, item.session_id, item.turn if kind is HiddenKind.TURN else 0, text, memory_id)
        out.setdefault(clean.key, clean)
    return list(out.values())


def hidden_rows(memory_id: str, items: Sequence[HiddenItem]) -> list[tuple[str, str, str, int, str]]:
    """``(memory_id, kind, session_id, turn, text)`` of each item to insert."""
    return [(memory_id, i.kind.value, i.session_id, i.turn, i.text) for i in check_hidden(memory_id, items)]


def hidden_from_row(row: Sequence[Any]) -> HiddenItem:
    memory_id, kind, session_id, turn, text = row
    return HiddenItem(HiddenKind(kind), session_id, int(turn), text, memory_id)


def parse_turn_ids(turn_ids: Iterable[str]) -> list[tuple[str, int]]:
    """``session_id:turn`` strings as pairs; ones that are not such ids are skipped (a memory's provenance is
    data, not an argument to refuse)."""
    out = []
    for ref in turn_ids:
        session_id, _, turn = ref.rpartition(":")
        if session_id and turn.isdigit() and int(turn) > 0:
            out.append((session_id, int(turn)))
    return out


def visible_state(state: SessionState, hidden: Iterable[HiddenItem]) -> SessionState:
    """``state`` without its hidden exchanges (raw window and turn log) and hidden facts."""
    hidden = list(hidden)
    turns = {i.turn for i in hidden if i.kind is HiddenKind.TURN}
    facts = {i.text for i in hidden if i.kind is HiddenKind.FACT}
    if not turns and not facts:
        return state
    return replace(
        state,
        base_truth=tuple(f for f in state.base_truth if f.text not in facts),
        turn_log=tuple(t for t in state.turn_log if t.turn not in turns),
        raw_window=tuple(m for m in state.raw_window if m.turn not in turns),
    )


def keep_hidden_facts(new: Sequence[Fact], stored: Sequence[Fact], hidden_texts: Iterable[str]) -> tuple[Fact, ...]:
    """The base truth a commit writes: ``new`` (what the turn made of the visible facts) and, after it, the stored
    facts that are hidden and not in ``new`` already."""
    texts = set(hidden_texts)
    if not texts:
        return tuple(new)
    have = {f.text for f in new}
    return (*new, *(f for f in stored if f.text in texts and f.text not in have))


async def hide_items(tx: Tx, user: UserRef, memory_id: str, items: Sequence[HiddenItem]) -> int:
    """Inside the caller's write transaction: record ``items`` as hidden by ``memory_id``."""
    rows = hidden_rows(memory_id, items)
    stamp = utcnow()
    await tx.many(
        "INSERT INTO hidden_items (tenant, user_id, memory_id, kind, session_id, turn, text, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(user.tenant, user.user_id, *row, stamp) for row in rows],
    )
    return len(rows)


async def unhide_items(tx: Tx, user: UserRef, memory_id: str) -> int:
    """Inside the caller's write transaction: show again what ``memory_id`` hid."""
    return await tx.execute(
        "DELETE FROM hidden_items WHERE tenant = ? AND user_id = ? AND memory_id = ?",
        (user.tenant, user.user_id, memory_id),
    )


async def session_hidden(tx: Tx, user: UserRef, session_id: str) -> list[HiddenItem]:
    """Inside the caller's transaction: what is hidden of one session."""
    rows = await tx.all(
        f"SELECT {HIDDEN_COLUMNS} FROM hidden_items WHERE tenant = ? AND user_id = ? AND session_id = ?",
        (user.tenant, user.user_id, session_id),
    )
    return [hidden_from_row(r) for r in rows]


async def hidden_turns(sql: Sql, user: UserRef) -> list[tuple[str, int]]:
    """The user's hidden exchanges, ``(session_id, turn)``."""
    rows = await sql.all(
        "SELECT DISTINCT session_id, turn FROM hidden_items WHERE tenant = ? AND user_id = ? AND kind = 'turn'",
        (user.tenant, user.user_id),
    )
    return [(str(sid), int(turn)) for sid, turn in rows]


class HiddenReads:
    """The reads of ``hidden_items`` and of the sessions a forget looks at; a backend's ``HiddenStore`` is this
    class plus its full-text search of exchanges (:meth:`_holding`)."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    async def hidden(self, user: UserRef, *, memory_id: str | None = None) -> list[HiddenItem]:
        query = f"SELECT {HIDDEN_COLUMNS} FROM hidden_items WHERE tenant = ? AND user_id = ?"
        args: list[Any] = [user.tenant, user.user_id]
        if memory_id is not None:
            query += " AND memory_id = ?"
            args.append(memory_id)
        rows = await self._sql.all(f"{query} ORDER BY {self._sql.key}", args)
        return [hidden_from_row(r) for r in rows]

    async def version(self, user: UserRef) -> tuple[int, int]:
        row = await self._sql.one(
            f"SELECT count(*), coalesce(max({self._sql.key}), 0) FROM hidden_items WHERE tenant = ? AND user_id = ?",
            (user.tenant, user.user_id),
        )
        assert row is not None  # an aggregate always has its row
        return (int(row[0]), int(row[1]))

    async def session_texts(self, user: UserRef, session_ids: Sequence[str]) -> list[tuple[str, str, tuple[Fact, ...]]]:
        wanted = sorted(set(session_ids))
        if not wanted:
            return []
        rows = await self._sql.all(
            f"SELECT id, line, base_truth FROM sessions WHERE tenant = ? AND user_id = ? AND {self._sql.among('id')} "
            f"ORDER BY {self._sql.key}",
            (user.tenant, user.user_id, self._sql.values(wanted)),
        )
        return [(str(sid), str(line), facts_from_json(facts)) for sid, line, facts in rows]

    async def mentions(
        self,
        user: UserRef,
        terms: Sequence[str],
        *,
        turn_ids: Sequence[str] = (),
        said_at: Sequence[datetime] = (),
        limit: int = 1000,
    ) -> builtins.list[ArchivedTurn]:
        """Three lookups in one read: by term (the backend's full-text search), by name (one indexed statement per
        ``session_id:turn``) and by the exact times."""
        check_page(limit)
        named = parse_turn_ids(turn_ids)
        times = sorted({utc(when) for when in said_at})
        key = self._sql.key
        base = f"SELECT {TURN_COLUMNS}, t.{key} FROM session_turns t JOIN sessions s ON s.{key} = t.session_{key} "

        async def body(tx: Tx) -> dict[int, Row]:
            found: dict[int, Row] = {}
            if terms:
                holding, args = self._holding(user, list(terms))
                rows = await tx.all(f"{holding} ORDER BY t.{key} DESC LIMIT ?", (*args, limit))
                found.update((int(r[-1]), r) for r in rows)
            for session_id, turn in named:
                row = await tx.one(
                    base + "WHERE s.tenant = ? AND s.user_id = ? AND s.id = ? AND t.turn = ?",
                    (user.tenant, user.user_id, session_id, turn),
                )
                if row is not None:
                    found[int(row[-1])] = row
            if times:
                rows = await tx.all(
                    base + f"WHERE t.tenant = ? AND t.user_id = ? AND t.at IN ({', '.join('?' * len(times))})",
                    (user.tenant, user.user_id, *times),
                )
                found.update((int(r[-1]), r) for r in rows)
            return found

        found = await self._sql.read(body)
        when, flags = self._sql.when, self._sql.unjson
        return [turn_from_row(found[k][:-1], when=when, flags=flags) for k in sorted(found, reverse=True)]

    def _holding(self, user: UserRef, terms: builtins.list[str]) -> tuple[str, builtins.list[Any]]:
        """The backend's hook: a statement (``SELECT TURN_COLUMNS, t.<key>`` from ``session_turns t`` joined to
        ``sessions s``) of the user's exchanges holding any of ``terms``, and its arguments."""
        raise NotImplementedError
