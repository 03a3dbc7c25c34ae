"""Erasure fences on PostgreSQL (:mod:`memstack.store.fence`): the ``user_erasures`` table and ``memstack_fence``.

A fenced write transaction starts with ``SELECT memstack_fence(lock, key, epoch)``: the function takes the user's
erasure lock shared (``pg_advisory_xact_lock_shared``, held until the transaction ends), then reads the user's
epoch (a statement of its own inside a volatile function, so it sees every commit made before it got the lock) and
raises ``SQLSTATE MS001`` (:class:`~memstack.errors.UserErased`) when it is not the pinned one; the transaction is
then rolled back whole. One round trip, and the check is the server's, so it holds in a pipeline too. The erasure
takes the same lock exclusively as its first statement: it waits for fenced transactions in flight (and deletes
what they wrote), and fenced transactions that come after it wait for its commit and then see the new epoch. Locks
are transaction-scoped: they work through a transaction-pooling pooler.
"""

from __future__ import annotations

from typing import Any

import psycopg

from memstack.store.fence import KEEP_S, NEVER_ERASED, Fence, erasure_key, new_epoch, user_lock_key
from memstack.store.fence import current as current_fence
from memstack.types import UserRef

__all__ = [
    "USER_ERASED",
    "enter_fence",
    "erasure_epoch",
    "fence_function",
    "prune_erasures",
    "record_erasure",
]

Conn = psycopg.AsyncConnection[Any]

#: The SQLSTATE ``memstack_fence`` raises for a write of work that began before the user's erasure.
USER_ERASED = "MS001"


async def fence_function(conn: Conn, dim: int) -> None:
    """Migration ``0020_user_erasures``, after its table (:data:`memstack.store._tables.USER_ERASURES`): the
    function every write transaction under a fence starts with."""
    await conn.execute(
        f"""
        CREATE FUNCTION memstack_fence(lock_key bigint, erasure_key text, expected bigint) RETURNS void
        LANGUAGE plpgsql VOLATILE AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock_shared(lock_key);
            IF expected IS NOT NULL
               AND coalesce((SELECT epoch FROM user_erasures WHERE key = erasure_key), 0) <> expected THEN
                RAISE EXCEPTION 'the user was erased after this work began' USING ERRCODE = '{USER_ERASED}';
            END IF;
        END
        $$
        """.encode()
    )


def _lock(user: UserRef) -> int:
    return user_lock_key(user, "erasure")


async def enter_fence(conn: Conn, fence: Fence | None = None) -> None:
    """First statement of a write transaction: under ``fence`` (default: the one the caller runs under), take the
    user's erasure lock shared and check the pinned epoch (the server raises ``MS001`` when it moved; in a pipeline,
    at the next sync)."""
    fence = fence or current_fence()
    if fence is not None:
        await conn.execute(
            b"SELECT memstack_fence(%s, %s, %s)", (_lock(fence.user), erasure_key(fence.user), fence.epoch)
        )


async def erasure_epoch(conn: Conn, user: UserRef) -> int:
    row = await (await conn.execute(b"SELECT epoch FROM user_erasures WHERE key = %s", (erasure_key(user),))).fetchone()
    return NEVER_ERASED if row is None else int(row[0])


async def record_erasure(conn: Conn, user: UserRef) -> None:
    """First statements of an erasure's transaction: wait for the user's fenced writes in flight (the lock, taken
    exclusively), then give the user a new epoch and drop erasures older than ``KEEP_S``."""
    await conn.execute(b"SELECT pg_advisory_xact_lock(%s)", (_lock(user),))
    await conn.execute(
        b"INSERT INTO user_erasures (key, epoch, erased_at) VALUES (%s, %s, now()) "
        b"ON CONFLICT (key) DO UPDATE SET epoch = excluded.epoch, erased_at = excluded.erased_at",
        (erasure_key(user), new_epoch()),
    )
    await prune_erasures(conn)


async def prune_erasures(conn: Conn) -> None:
    """Forget erasures older than ``KEEP_S``: as an erasure commits, and when a store opens (so a database without
    later erasures does not keep their digests)."""
    await conn.execute(b"DELETE FROM user_erasures WHERE erased_at < now() - make_interval(secs => %s)", (KEEP_S,))
