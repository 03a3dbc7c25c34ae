"""The import of a user (:meth:`~memstack.store.base.UserData.load`): an export document's records written back in one
transaction, the same statements on both backends (over :class:`~memstack.store._sql.Tx`), with each backend's own
columns (a memory's vector and stems, a turn's stems) from its :class:`LoadHooks`.

What is written is what the export reads back, field for field, so export → import into an empty store → export
gives the same document. The columns come from the document, not from a list here: a record's fields that are
columns of the export (:data:`~memstack.store._users.MEMORY`, ``SESSION``, ``TURN``…) are written as they are, so a
column added to the export (with its statement) is imported with no change here; a field the export does not read
is never written (the names that reach SQL are the export's own). A value is converted by its name: times (``at``,
``*_at``, ``valid_*``) from ISO 8601, JSON columns through :meth:`Sql.json <memstack.store._sql.Sql.json>`, lists
of names (``source_turn_ids``, ``flags``) through :attr:`LoadHooks.array`.

Decisions:

- **A user that already holds data is refused** (``ImportConflict``), never merged: merging two histories of one
  memory, or two turn logs of one session, has no answer that keeps both true. The engine first compares the stored
  export with the document and reports an identical one as unchanged (an import run twice), so this check is the
  guard against a write that slipped in between.
- **Ids the document names that another user holds are refused** (``ImportConflict``): memory, context and job ids
  are unique across the store, and an import must not take another user's (or tenant's) rows over.
- **What is derived is not imported but rebuilt**: the archived messages' vectors (``messages``) are embedded again
  by the engine after the commit (``archive_vectors.put``, which keeps each backend's search statistics); a memory's
  vector is embedded before the transaction and passed in (``vectors``); what a forget hides is dated by the import.
- Permanently deleted memories (``stored`` false) bring only their history and hides, as they were exported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstack.errors import ImportConflict, ImportRefused
from memstack.store._sql import Sql, Tx
from memstack.store._users import (
    ARTIFACT,
    CONTEXT,
    DROPPED,
    HIDES,
    HISTORY,
    JOB,
    MEMORY,
    SESSION,
    SNAPSHOT,
    TURN,
    UserReads,
)
from memstack.types import UserRef, Vector, check_id, utcnow

__all__ = ["LoadHooks", "UserRows", "load_user"]

#: A backend's extra columns of a row: column → (its placeholder, such as ``?`` or ``?::vector``, and the value).
Columns = dict[str, tuple[str, Any]]

#: Fields written as JSON; and lists of names, a ``text[]`` on PostgreSQL.
_JSON = frozenset({"metadata", "before", "after", "facts", "manifest", "payload", "result"})
_ARRAYS = frozenset({"source_turn_ids", "flags"})
#: Export field → column, where the export renames one (a session's facts are its ``base_truth``).
_SESSION_COLUMNS = {"facts": "base_truth"}
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class LoadHooks:
    """A backend's part of an import: ``memory`` gives a memory's own columns (its vector, stems…) from its
    content and vector, ``turn`` a turn's from its two texts; ``after_memories`` runs once the memories are in
    (tenant, user, the ids written as one value; SQLite fills its full-text index with it); ``array`` writes a
    list of names."""

    memory: Callable[[UserRef, str, Vector], Columns]
    turn: Callable[[UserRef, str, str], Columns]
    array: Callable[[list[Any]], Any]
    after_memories: str | None = None


def _is_time(name: str) -> bool:
    return name == "at" or name.endswith("_at") or name.startswith("valid_")


def _value(sql: Sql, hooks: LoadHooks, name: str, value: Any, where: str) -> Any:
    if value is None:
        return None
    if _is_time(name):
        if not isinstance(value, str):
            raise ImportRefused(f"{where}: {name!r} is not an ISO 8601 time; nothing was imported")
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ImportRefused(
                f"{where}: {name!r} is not an ISO 8601 time ({value!r}); nothing was imported"
            ) from None
    if name in _ARRAYS:
        if not isinstance(value, list):
            raise ImportRefused(f"{where}: {name!r} is not a list; nothing was imported")
        return hooks.array(value)
    if name in _JSON:
        return sql.json(value)
    return value


def _row(
    sql: Sql,
    hooks: LoadHooks,
    fields: Sequence[str],
    record: Mapping[str, Any],
    where: str,
    *,
    skip: frozenset[str] = frozenset(),
    renamed: Mapping[str, str] | None = None,
) -> Columns:
    """The record's fields that are export columns, as columns to insert (placeholder ``?``)."""
    out: Columns = {}
    for name in fields:
        if name in skip or name not in record:
            continue
        column = (renamed or {}).get(name, name)
        assert _NAME.match(column), column  # the export's own names only
        out[column] = ("?", _value(sql, hooks, name, record[name], where))
    return out


async def _insert(tx: Tx, table: str, columns: Columns) -> None:
    names = ", ".join(columns)
    marks = ", ".join(mark for mark, _ in columns.values())
    await tx.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", [value for _, value in columns.values()])


def _mine(user: UserRef) -> Columns:
    return {"tenant": ("?", user.tenant), "user_id": ("?", user.user_id)}


async def _held(tx: Tx, sql: Sql, user: UserRef, ids: list[str]) -> set[str]:
    """Which of the memory ids ``user`` holds already."""
    rows = await tx.all(
        f"SELECT id FROM memories WHERE tenant = ? AND user_id = ? AND {sql.among('id')}",
        (user.tenant, user.user_id, sql.values(ids)),
    )
    return {str(r[0]) for r in rows}


async def _refuse_taken(
    tx: Tx, sql: Sql, user: UserRef, document: Mapping[str, list[dict[str, Any]]], *, merge: bool
) -> None:
    who = (user.tenant, user.user_id)
    for table in (
        () if merge else ("memories", "memory_history", "sessions", "context_manifests", "jobs", "capture_drops")
    ):
        if await tx.one(f"SELECT 1 FROM {table} WHERE tenant = ? AND user_id = ? LIMIT 1", who):
            raise ImportConflict(
                f"user {user.user_id!r} of tenant {user.tenant!r} already holds data ({table}) that differs from the "
                "document: erase the user first (`memstack users delete`) to replace it, or import under the user "
                "the document was exported from into a store that does not hold them; nothing was imported"
            )
    named = (
        ("memories", "id", [m["id"] for m in document["memories"] if m.get("stored")]),
        ("context_manifests", "context_id", [c["context_id"] for c in document["contexts"]]),
        ("jobs", "id", [j["id"] for j in document["jobs"]]),
    )
    for table, column, ids in named:
        if ids and (
            row := await tx.one(f"SELECT {column} FROM {table} WHERE {sql.among(column)} LIMIT 1", [sql.values(ids)])
        ):
            raise ImportConflict(
                f"the document names {table} id {row[0]!r}, which another user or tenant holds in this store: "
                "an import never takes over another user's rows; nothing was imported"
            )


async def load_user(
    tx: Tx,
    sql: Sql,
    hooks: LoadHooks,
    user: UserRef,
    document: Mapping[str, list[dict[str, Any]]],
    vectors: Mapping[str, Vector],
    *,
    merge: bool = False,
) -> dict[str, int]:
    """Write ``document`` (sections of an export, :class:`memstack.imports.UserDocument`) for ``user`` inside
    ``tx``; ``vectors``: each stored memory's by id. Rows written per table. ``merge``: a user holding data is not
    refused, and the memories they hold already (by id) are skipped with their history (mem0's import)."""
    if merge:
        held = await _held(tx, sql, user, [str(m["id"]) for m in document["memories"]])
        document = {**document, "memories": [m for m in document["memories"] if m["id"] not in held]}
    await _refuse_taken(tx, sql, user, document, merge=merge)
    added = dict.fromkeys(
        ("memories", "memory_history", "hidden_items", "sessions", "session_turns", "session_artifacts"), 0
    )
    added.update(dict.fromkeys(("session_snapshots", "context_manifests", "jobs", "capture_drops"), 0))
    now = utcnow()
    for i, memory in enumerate(document["memories"]):
        where = f"memories[{i}]"
        if memory["stored"]:
            if not isinstance(memory.get("content"), str) or memory["id"] not in vectors:
                raise ImportRefused(f"{where} has no 'content'; nothing was imported")
            columns = _row(sql, hooks, MEMORY, memory, where)
            columns |= _mine(user) | hooks.memory(user, memory["content"], vectors[memory["id"]])
            await _insert(tx, "memories", columns)
            added["memories"] += 1
        for j, event in enumerate(memory["history"]):
            row = _row(sql, hooks, HISTORY, event, f"{where}.history[{j}]", skip=frozenset({"memory_id"}))
            await _insert(tx, "memory_history", {"memory_id": ("?", memory["id"])} | _mine(user) | row)
            added["memory_history"] += 1
        for j, hide in enumerate(memory["hides"]):
            row = _row(sql, hooks, HIDES, hide, f"{where}.hides[{j}]", skip=frozenset({"memory_id"}))
            extra = {"memory_id": ("?", memory["id"]), "created_at": ("?", now)}
            await _insert(tx, "hidden_items", extra | _mine(user) | row)
            added["hidden_items"] += 1
    if hooks.after_memories and added["memories"]:
        ids = [m["id"] for m in document["memories"] if m["stored"]]
        await tx.execute(hooks.after_memories, (user.tenant, user.user_id, sql.values(ids)))
    for i, session in enumerate(document["sessions"]):
        where = f"sessions[{i}]"
        await _insert(tx, "sessions", _mine(user) | _row(sql, hooks, SESSION, session, where, renamed=_SESSION_COLUMNS))
        found = await tx.one(
            f"SELECT {sql.key} FROM sessions WHERE tenant = ? AND user_id = ? AND id = ?",
            (user.tenant, user.user_id, session["id"]),
        )
        assert found is not None
        parent = {f"session_{sql.key}": ("?", found[0])}
        added["sessions"] += 1
        for j, turn in enumerate(session["turns"]):
            row = _row(sql, hooks, TURN, turn, f"{where}.turns[{j}]")
            texts = (str(turn.get("user_text", "")), str(turn.get("assistant_text", "")))
            await _insert(tx, "session_turns", parent | _mine(user) | row | hooks.turn(user, *texts))
            added["session_turns"] += 1
        children: tuple[tuple[str, Sequence[str], list[dict[str, Any]]], ...] = (
            ("session_artifacts", ARTIFACT, session["artifacts"]),
            ("session_snapshots", SNAPSHOT, session["snapshots"]),
        )
        for table, fields, items in children:
            for j, item in enumerate(items):
                await _insert(tx, table, parent | _row(sql, hooks, fields, item, f"{where}.{table}[{j}]"))
                added[table] += 1
    tail: tuple[tuple[str, Sequence[str], str], ...] = (
        ("context_manifests", CONTEXT, "contexts"),
        ("jobs", JOB, "jobs"),
        ("capture_drops", DROPPED, "dropped_captures"),
    )
    for table, fields, section in tail:
        for i, item in enumerate(document[section]):
            await _insert(tx, table, _mine(user) | _row(sql, hooks, fields, item, f"{section}[{i}]"))
            added[table] += 1
    return added


class UserRows(UserReads):
    """:class:`~memstack.store.base.UserData` but ``epoch`` and ``erase``: ``export`` and ``list``
    (:class:`~memstack.store._users.UserReads`), and ``load`` in one transaction over the backend's
    :class:`LoadHooks` (``_hooks``), then what the backend does once it is committed (:meth:`_loaded`)."""

    _hooks: LoadHooks

    async def load(
        self,
        user: UserRef,
        document: Mapping[str, list[dict[str, Any]]],
        vectors: Mapping[str, Vector],
        *,
        merge: bool = False,
    ) -> dict[str, int]:
        check_id(user.user_id, "user_id")
        added = await self._sql.write(
            lambda tx: load_user(tx, self._sql, self._hooks, user, document, vectors, merge=merge)
        )
        await self._loaded(user, document)
        return added

    async def _loaded(self, user: UserRef, document: Mapping[str, list[dict[str, Any]]]) -> None:
        raise NotImplementedError
