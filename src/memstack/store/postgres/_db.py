"""Connections: the first connection that checks the server, the async pool, and driver errors as memstack errors.

Every pool connection is in autocommit mode: a read is one statement, a write is an explicit ``transaction()``
block, and no connection ever sits idle inside a transaction (which would hold back ``CREATE INDEX CONCURRENTLY``
and vacuum). Each connection is configured once when the pool opens it: pgvector's types are registered (binary
vectors), the session time zone is UTC, HNSW scans are iterative (``hnsw.iterative_scan = relaxed_order``) and
JIT compilation is off (it only adds latency to short per-user statements like these).

Behind a transaction-pooling pooler (``pooler="transaction"``: PgBouncer's ``pool_mode = transaction``) a client
connection is not one server session: consecutive transactions may run on different server connections. Then no
statement is prepared (``prepare_threshold=None``), nothing is ``SET`` per connection (it would stay behind on a
server connection another client gets next), and a search that may use an HNSW index sets what it needs with ``SET
LOCAL`` (:func:`~memstack.store.vectors.pgvector.searching`). Work that needs a session of its own (a session
advisory lock across statements, ``CREATE INDEX CONCURRENTLY``) uses :meth:`Database.session`, a direct connection
to ``direct_url``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import psycopg
from psycopg.types import TypeInfo
from psycopg_pool import AsyncConnectionPool, PoolClosed, PoolTimeout

from memstack.errors import (
    ConfigError,
    InputError,
    MemstackError,
    MigrationError,
    StoreError,
    StoreUnavailable,
    UserErased,
)
from memstack.store.fence import current as current_fence
from memstack.store.postgres._fence import USER_ERASED, enter_fence

__all__ = ["Database", "VectorCodec", "connect", "describe_url", "map_error"]

#: How query vectors travel: ``binary`` uses pgvector's registered binary dumper, ``text`` sends ``'[…]'::vector``.
VectorCodec = Literal["binary", "text"]

#: ``none``: connections are server sessions (direct, or a session-pooling pooler); ``transaction``: see above.
Pooler = Literal["none", "transaction"]

_FIX_CONNECTION = (
    "check that the server is running and that MEMSTACK_DATABASE_URL is right "
    "(postgresql://user:password@host:5432/database)"
)


def describe_url(url: str) -> str:
    """``user@host:port/database`` without the password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "<unparsable URL>"
    host = info.get("host") or "localhost"
    port = f":{info['port']}" if info.get("port") else ""
    user = f"{info['user']}@" if info.get("user") else ""
    return f"{user}{host}{port}/{info.get('dbname', '')}"


def _reason(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def map_error(exc: BaseException, where: str) -> MemstackError:
    """A driver or pool error as the typed error a caller can act on (the transaction was rolled back).

    Decided by SQLSTATE: psycopg files very different failures (a dropped connection, a deadlock, a full disk)
    under ``OperationalError``."""
    if isinstance(exc, MemstackError):
        return exc
    if isinstance(exc, PoolTimeout):
        return StoreUnavailable(
            f"no connection to PostgreSQL at {where} became available in time ({_reason(exc)}); "
            f"{_FIX_CONNECTION}, or raise pool_size if the server is merely busy"
        )
    if isinstance(exc, PoolClosed):
        return StoreError("this PostgreSQL store is closed; open it again with PostgresStore.open()")
    state = getattr(exc, "sqlstate", None) or ""
    if state == USER_ERASED:
        return UserErased(
            "the user was erased after this work began; nothing more of it is written (what it wrote before went "
            "with the erasure)"
        )
    if isinstance(exc, UnicodeEncodeError) or state in _UNSTORABLE or _NUL.search(str(exc)):
        # The shared checks (memstack.types.check_text) refuse such text before any work; this is the last line.
        return InputError(
            "the text contains a character PostgreSQL cannot store (NUL or a lone surrogate); nothing was changed. "
            "Remove it"
        )
    if isinstance(exc, psycopg.OperationalError) and (not state or state.startswith("08") or state in _GONE):
        return StoreUnavailable(f"lost the connection to PostgreSQL at {where} ({_reason(exc)}); {_FIX_CONNECTION}")
    if state == "53300":
        return StoreUnavailable(
            f"PostgreSQL at {where} has no connection slots left ({_reason(exc)}); "
            "lower pool_size or raise the server's max_connections"
        )
    if state.startswith("40") or state == "57014":  # serialization failure, deadlock, statement cancelled
        return StoreError(f"PostgreSQL rolled the operation back ({_reason(exc)}); nothing was changed, try again")
    if state in ("42P01", "42703", "42883"):  # undefined table, column, function
        return MigrationError(
            f"the memstack schema in {where} is missing or incomplete ({_reason(exc)}); "
            "open the store again so its migrations run, or check that the URL names the right database"
        )
    if state == "22000" and _DIMENSIONS.search(str(exc)):
        return ConfigError(
            f"the vectors in {where} have another dimension than this process's embedder ({_reason(exc)}): the store "
            "was switched to another model with `memstack reembed`; restart this process with the MEMSTACK_EMBEDDER "
            "the store now holds (opening it with the old one says which)"
        )
    if state == "42501":
        return StoreError(
            f"PostgreSQL refused the operation: {_reason(exc)}; grant the memstack role rights on its tables"
        )
    return StoreError(f"PostgreSQL failed: {_reason(exc)}; the operation was rolled back and nothing was changed")


#: pgvector's messages for a vector of the wrong length ("different vector dimensions 256 and 384",
#: "expected 256 dimensions, not 384").
_DIMENSIONS = re.compile(r"vector dimensions|expected \d+ dimensions")

#: Text PostgreSQL cannot hold: untranslatable character (a ``\\u0000`` in JSON), invalid byte sequence.
_UNSTORABLE = frozenset({"22P05", "22021"})
#: psycopg's own refusal, raised before anything is sent ("text fields cannot contain NUL (0x00) bytes").
_NUL = re.compile(r"cannot contain NUL")

#: Server states meaning it is going away or not accepting connections (admin/crash shutdown, starting up).
_GONE = frozenset({"57P01", "57P02", "57P03"})


async def connect(url: str, *, timeout_s: float) -> psycopg.AsyncConnection[Any]:
    """One autocommit connection, or ``StoreUnavailable`` saying why not and what to do."""
    where = describe_url(url)
    try:
        return await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=max(1, round(timeout_s)))
    except psycopg.ProgrammingError as exc:
        raise StoreUnavailable(
            f"{where} is not a valid PostgreSQL URL ({_reason(exc)}); "
            "write it as postgresql://user:password@host:5432/database"
        ) from None
    except psycopg.Error as exc:
        raise StoreUnavailable(f"cannot connect to PostgreSQL at {where}: {_reason(exc)}; {_FIX_CONNECTION}") from None


class Database:
    """The pool and how its connections are set up; ``connection()`` maps every driver error."""

    def __init__(
        self,
        url: str,
        *,
        vector_info: TypeInfo,
        pool_size: int,
        timeout_s: float,
        ef_search: int,
        codec: VectorCodec,
        pooler: Pooler = "none",
        direct_url: str | None = None,
    ) -> None:
        if pooler not in ("none", "transaction"):
            raise ConfigError(f"pooler must be 'none' or 'transaction', got {pooler!r}")
        self.where = describe_url(url)
        self.codec = codec
        self.pooler = pooler
        self._url = url
        self._direct_url = direct_url
        self._timeout_s = timeout_s
        self._vector_info = vector_info
        self._settings = (
            "SET TimeZone = 'UTC'; SET jit = off; SET hnsw.iterative_scan = relaxed_order; "
            f"SET hnsw.ef_search = {int(ef_search)}"
        )
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, round(timeout_s))}
        if pooler == "transaction":
            kwargs["prepare_threshold"] = None
        self.pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs=kwargs,
            configure=self._configure,
            timeout=timeout_s,
            open=False,
            name="memstack",
        )

    async def _configure(self, conn: psycopg.AsyncConnection[Any]) -> None:
        from pgvector.psycopg.vector import register_vector_info

        register_vector_info(conn, self._vector_info)
        if self.pooler == "none":
            await conn.execute(self._settings.encode())

    async def open(self) -> None:
        try:
            await self.pool.open(wait=True, timeout=self._timeout_s)
        except (psycopg.Error, PoolTimeout) as exc:
            await self.pool.close()
            raise map_error(exc, self.where) from None

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection; driver errors raised while it is held come out as memstack errors."""
        try:
            async with self.pool.connection() as conn:
                yield conn
        except MemstackError:
            raise
        except (psycopg.Error, PoolTimeout, PoolClosed, UnicodeEncodeError) as exc:
            raise map_error(exc, self.where) from exc

    @asynccontextmanager
    async def writing(self, *, single: bool = False) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection for a write of a user's data, in one transaction whose first statement holds the erasure
        fence the caller runs under, if any (:mod:`memstack.store.postgres._fence`; ``UserErased``, and nothing
        written, when the user was erased after the fence was pinned). ``single``: the block needs no transaction
        of its own (one statement, or a write and a read), so without a fence it runs in autocommit."""
        if single and current_fence() is None:
            async with self.connection() as conn:
                yield conn
            return
        async with self.connection() as conn, conn.transaction():
            await enter_fence(conn)
            yield conn

    @asynccontextmanager
    async def session(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection that is one server session for as long as it is held (session advisory locks, ``CREATE
        INDEX CONCURRENTLY``): a pool connection, or behind a transaction pooler a direct connection to
        ``direct_url`` (``ConfigError`` when there is none)."""
        if self.pooler == "none":
            async with self.connection() as conn:
                yield conn
            return
        if self._direct_url is None:
            raise ConfigError(
                f"{self.where} is a transaction pooler, and this needs a session of its own: set "
                "MEMSTACK_DATABASE_DIRECT_URL to reach PostgreSQL itself"
            )
        from pgvector.psycopg.vector import register_vector_info

        conn = await connect(self._direct_url, timeout_s=self._timeout_s)
        try:
            register_vector_info(conn, self._vector_info)
            await conn.execute(self._settings.encode())
            yield conn
        except MemstackError:
            raise
        except psycopg.Error as exc:
            raise map_error(exc, describe_url(self._direct_url)) from exc
        finally:
            await conn.close()

    def vector_param(self, vector: Any) -> Any:
        """A query vector as this store sends it (see :data:`VectorCodec`)."""
        if self.codec == "text":
            return "[" + ",".join(map(repr, vector.tolist())) + "]"
        return vector
