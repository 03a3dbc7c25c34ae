"""How the backend-neutral roles talk to a database: :class:`Sql`, one small Protocol each backend implements in its
dialect (``store/sqlite/_sql.py``, ``store/postgres/_sql.py``), so a role whose statements are plain SQL is written
once (``store/_contexts.py``, ``_threads.py``, ``_drops.py``, ``_archive.py``) and a backend keeps only what is its
own: its tables, its connection and its transactions.

The neutral SQL uses ``?`` placeholders (PostgreSQL's adapter turns them into ``%s``), :attr:`Sql.key` for the
integer key of a row (``pk`` on SQLite, ``seq`` on PostgreSQL), :attr:`Sql.for_update` to lock the rows a write
reads, and passes times as ``datetime`` (SQLite's adapter stores them as sortable UTC text); :meth:`Sql.when`,
:meth:`Sql.unjson` and :meth:`Sql.vector` read a time, a JSON and a vector column back, and :meth:`Sql.among` tests
a column against a list of values given as one argument.

A transaction is a coroutine function given a :class:`Tx` (``await sql.write(body)``). On PostgreSQL it runs on a
pooled connection inside ``transaction()``; on SQLite the whole body runs on the database thread, driven to its end
without an event loop (its statements never wait), so a transaction is still one trip to that thread and nothing
else runs on the connection meanwhile. So a body awaits only its ``Tx``: anything else that would wait is an
error on SQLite (:func:`drive`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

from memstack.errors import StoreError
from memstack.types import Vector

__all__ = ["Row", "Sql", "Tx", "drive"]

T = TypeVar("T")

Row = tuple[Any, ...]


class Tx(Protocol):
    """Statements inside one transaction."""

    async def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        ...

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None: ...

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]: ...

    async def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row of arguments."""
        ...


class Sql(Protocol):
    """A backend's database, as the neutral roles use it."""

    #: The integer key column of a table that has one, and the name of a reference to it (``session_pk``):
    #: ``pk`` or ``seq``.
    key: str
    #: What orders any table's rows by insertion (``rowid`` or ``seq``).
    rowid: str
    #: What follows a text column to compare and order it byte by byte (``COLLATE "C"`` on PostgreSQL, whose
    #: default follows the database's locale; nothing on SQLite, where it is the default).
    binary: str
    #: What follows a ``SELECT`` to keep its rows from other writers until the transaction ends (``FOR UPDATE`` on
    #: PostgreSQL; nothing on SQLite, whose write transaction holds the whole database).
    for_update: str

    def when(self, value: Any) -> Any:
        """A time column's value as a ``datetime`` (``None`` stays ``None``)."""
        ...

    def json(self, value: Any) -> Any:
        """A JSON value as a JSON column takes it."""
        ...

    def unjson(self, value: Any) -> Any:
        """A JSON column's value as Python data."""
        ...

    def json_text(self, text: str) -> Any:
        """JSON already written as text (kept as written where the column is text), as a JSON column takes it."""
        ...

    def vector(self, value: Any) -> Vector:
        """A vector column's value (SQLite's little-endian float32 bytes, pgvector's ``vector``) as float32."""
        ...

    def embedding(self, vector: Vector) -> Any:
        """A float32 vector as a vector column takes it (:meth:`vector` read back)."""
        ...

    def texts(self, items: Sequence[str]) -> Any:
        """A list of texts as a column of them takes it (a JSON array on SQLite, ``text[]`` on PostgreSQL)."""
        ...

    def terms(self, terms: Sequence[str]) -> Any:
        """A row's stems as its ``terms`` column takes them (:mod:`memstack.store._fulltext`: space-separated for
        SQLite's FTS5, ``text[]`` behind PostgreSQL's GIN index)."""
        ...

    def among(self, column: str) -> str:
        """SQL that is true when ``column`` is one of a list of values passed as one argument (:meth:`values`):
        one statement whatever the list's length (SQLite reads a JSON array, PostgreSQL an array)."""
        ...

    def values(self, items: Sequence[Any]) -> Any:
        """``items`` as the one argument of :meth:`among`."""
        ...

    async def all(self, sql: str, args: Sequence[Any] = ()) -> list[Row]:
        """One read statement, outside any transaction."""
        ...

    async def one(self, sql: str, args: Sequence[Any] = ()) -> Row | None: ...

    async def mapped(self, sql: str, args: Sequence[Any], convert: Callable[[Row], T]) -> list[T]:
        """One read statement's rows, each through ``convert`` where it is read (on SQLite its database thread, so a
        long page of rows made into objects does not hold the event loop)."""
        ...

    async def execute(self, sql: str, args: Sequence[Any] = (), *, fenced: bool = True) -> int:
        """One write statement, under the caller's erasure fence (:mod:`memstack.store.fence`) unless ``fenced``
        is false (a tenant's rows: keys, agents); the number of rows it changed."""
        ...

    async def read(self, body: Callable[[Tx], Coroutine[Any, Any, T]], *, snapshot: bool = True) -> T:
        """``body`` over one consistent view of the database. ``snapshot=False``: its statements need not see one
        view (a read under a lock that keeps writers out), so PostgreSQL runs them in autocommit on one connection,
        without the round trips of a transaction; SQLite reads in one transaction anyway."""
        ...

    async def write(
        self, body: Callable[[Tx], Coroutine[Any, Any, T]], *, fenced: bool = True, single: bool = False
    ) -> T:
        """``body`` in one write transaction (under the caller's erasure fence unless ``fenced`` is false); rolled
        back whole if it raises. ``single``: the body is one write statement (or a write and a read of its result)
        and needs no transaction of its own, so where no fence holds PostgreSQL runs it in autocommit (one round
        trip); SQLite runs every body in one transaction on its database thread anyway."""
        ...


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end at once: a transaction body whose statements answer without waiting (SQLite's)."""
    try:
        coro.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coro.close()
    raise StoreError("a SQLite transaction body waited on something other than its statements; nothing was changed")
