"""Erasure as a fence: work for a user that began before the user's erasure writes nothing after it.

An erasure (:meth:`~memstack.store.base.UserData.erase`) deletes a user's rows in one transaction. Work for the
user that spans several transactions (an import, a chat turn and the background work it leaves, a memory
detection, phase 2 of a turn and its retries, the cross-session lines) may have read the user's data before that
commit and would write it back after it, in this process or in another one sharing the store. So such work **pins**
the user's erasure epoch before it reads anything (:meth:`~memstack.store.base.UserData.epoch`, one indexed read)
and runs under that :class:`Fence` (:func:`fenced`: a context variable, which the tasks it starts inherit); every
write transaction of the store under a fence checks, inside the transaction, that the user's epoch is still the one
pinned, else it is refused with :class:`~memstack.errors.UserErased` and rolled back.

The semantics, in one line: **an erasure is its commit; work that pinned the epoch before it writes nothing after
it** (what it wrote before went with the erasure), and work that pins after it writes data of a new user of that
id. The erasure's answer is given after its commit, so from the moment a caller holds it nothing older can write.

The epoch is ``0`` for a user never erased; each erasure stores a new random one in the ``user_erasures`` table,
keyed by a digest of (tenant, user id) (:func:`erasure_key`), never the id itself, with the time of the erasure.
Rows older than :data:`KEEP_S` are removed by the next erasure or the next opening of the store: after that not
even the digest is left, and only work that ran longer than that across the erasure could write past it (it would
find the epoch back at ``0``). The epoch is
random rather than counted so that a row removed and written again never repeats one.

How each backend holds the check: SQLite has one writer at a time, so reading the epoch inside a write transaction
(``BEGIN IMMEDIATE``) orders it against the erasure's transaction. PostgreSQL's transactions run side by side: a
fenced transaction first takes the user's erasure lock shared (``pg_advisory_xact_lock_shared``) and reads the
epoch once it holds it (the ``memstack_fence`` function, one round trip); the erasure takes the lock exclusively
before it writes the new epoch and deletes, so it waits for the fenced writes in flight, deletes what they wrote,
and every fenced write after it sees the new epoch. A fence without an epoch (:data:`Fence.epoch` ``None``: a
write that is one transaction, like adding a memory) checks nothing and only takes the lock, so on PostgreSQL such
a write of several tables (a memory and its history) is wholly before an erasure or wholly after it.

Work that lives on past the call that started it (the lease renewer, sweeps of other users' work) is started in
:func:`detached`, so it does not carry the fence of whichever call happened to start it.
"""

from __future__ import annotations

import contextvars
import hashlib
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from memstack.errors import UserErased
from memstack.types import UserRef

__all__ = [
    "KEEP_S",
    "NEVER_ERASED",
    "Epochs",
    "Fence",
    "current",
    "detached",
    "erasure_key",
    "fenced",
    "new_epoch",
    "pin",
    "user_lock_key",
]

#: The epoch of a user never erased (or erased longer than :data:`KEEP_S` ago).
NEVER_ERASED = 0

#: Seconds an erasure's row (a digest and an epoch) is kept: longer than any piece of work runs.
KEEP_S = 24 * 3600.0

_CURRENT: contextvars.ContextVar[Fence | None] = contextvars.ContextVar("memstack_fence", default=None)


@dataclass(frozen=True, slots=True)
class Fence:
    """Work for ``user`` that began when the user's erasure epoch was ``epoch`` (``None``: one transaction, which
    only takes the erasure lock)."""

    user: UserRef
    epoch: int | None

    def check(self, found: int) -> None:
        """Raise ``UserErased`` when the user's epoch is no longer the one pinned."""
        if self.epoch is not None and found != self.epoch:
            raise UserErased(
                f"user {self.user.user_id!r} of tenant {self.user.tenant!r} was erased after this work began; "
                "nothing more of it is written (what it wrote before went with the erasure)"
            )


class Epochs(Protocol):
    """What reads a user's epoch: a store's ``users`` role."""

    async def epoch(self, user: UserRef) -> int: ...


async def pin(epochs: Epochs, user: UserRef) -> Fence:
    """The fence of work for ``user`` starting now: the enclosing work's, when the caller already runs under a
    pinned fence of that user (an HTTP request that imports a conversation, then answers a turn in it, is one piece
    of work), else the user's epoch read now, before anything else of the user is."""
    outer = current()
    if outer is not None and outer.user == user and outer.epoch is not None:
        return outer
    return Fence(user, await epochs.epoch(user))


def current() -> Fence | None:
    """The fence the running code is under, if any."""
    return _CURRENT.get()


@contextmanager
def fenced(fence: Fence | None) -> Iterator[Fence | None]:
    """Run the block (and the tasks it starts) under ``fence`` (``None``: under none)."""
    token = _CURRENT.set(fence)
    try:
        yield fence
    finally:
        _CURRENT.reset(token)


def detached() -> contextvars.Context:
    """A copy of the current context without a fence: for a task that outlives the call starting it."""
    context = contextvars.copy_context()
    context.run(_CURRENT.set, None)
    return context


def erasure_key(user: UserRef) -> str:
    """What ``user_erasures`` keeps of an erased user: a digest of tenant and user id."""
    return hashlib.blake2b(f"{user.tenant}\x1f{user.user_id}".encode(), digest_size=16).hexdigest()


def user_lock_key(user: UserRef, salt: str = "memories") -> int:
    """A signed 64-bit key for PostgreSQL's advisory locks: one per (tenant, user) and purpose (``salt``), shared by
    the backend and its vector index (:mod:`memstack.store.vectors.hnsw`), which does not import the backend."""
    digest = hashlib.blake2b(f"{salt}\x1f{user.tenant}\x1f{user.user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def new_epoch() -> int:
    """A fresh epoch for an erasure: random, positive, 63 bits (a PostgreSQL ``bigint``, an SQLite integer)."""
    return secrets.randbelow(2**62) + 1
