"""Session leases: the order of a session's turns across processes, holding no connection while a turn runs.

A turn holds its session from the start of phase 1 to the end of its phase 2 (seed 04 §3: the next turn must see
this turn's summary and facts). That can be many seconds of model time, so the hold is a **lease row**, not a
connection or a transaction::

    held = await leases.acquire(user, session_id, timeout=600)       # FIFO in this process, then the lease row
    ...                                                              # phase 1: no connection, no transaction held
    await store.sessions.record(user, turn, lease=held.lease)        # fenced: refused once another took over
    ...                                                              # phase 2 (in the background)
    await store.sessions.commit(user, session_id, commit, lease=held.lease)
    await held.release()

- **Taking** a lease is one statement: it succeeds when the row is free or expired (or already this owner's: a take
  whose answer was lost to a cancellation) and bumps the row's fencing ``token``; otherwise the caller polls with a
  short backoff until ``timeout`` (``StoreBusy``).
- **Renewal**: the leases a process holds are renewed together, one statement every ``ttl_s / 3`` seconds, however
  many turns are running. A process that dies stops renewing, and its leases lapse after ``ttl_s``. A holder on this
  machine that is known to be dead (same host and PID namespace, PID gone) is taken over at once, so a restarted
  server does not wait out its predecessor's leases.
- **Fencing**: each write of a turn carries ``(owner, token)``; the store refuses it (:class:`~memstack.errors.
  LeaseLost`) once another holder has taken the lease, so a process that stalled past its lease cannot overwrite
  the turn of the process that took over.
- Within one process, the turns of one session first queue in arrival order on a local lock
  (:class:`LocalSessionLocks`), so a busy session costs the database one poll loop per process, not one per waiter.

Every statement is short and stands alone, so this works through a transaction-pooling connection pooler
(PgBouncer ``pool_mode = transaction``), and a pool of a few connections carries thousands of concurrent turns.
A backend provides the statements (:class:`LeaseTable`): ``take``, ``holder`` and ``give_back`` are written once
(:class:`LeaseRows`) over its clock, and it adds ``renew``; this module does the rest.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from memstack.errors import InputError, LeaseLost, MemstackError, StoreBusy
from memstack.store._sql import Row, Sql, Tx
from memstack.store.fence import detached
from memstack.types import UserRef, new_id

__all__ = [
    "DEFAULT_SESSION_LEASE_S",
    "HeldSession",
    "Lease",
    "LeaseKey",
    "LeaseRows",
    "LeaseTable",
    "LocalSessionLocks",
    "SessionLeases",
    "lease_lost",
    "owner_alive",
    "process_owner",
]

log = logging.getLogger("memstack.store")

#: Seconds a lease lasts without renewal: how long a crashed process (on another machine) blocks its sessions.
DEFAULT_SESSION_LEASE_S = 15.0

#: (tenant, user_id, session_id)
LeaseKey = tuple[str, str, str]

_POLL_FIRST_S = 0.005
_POLL_MAX_S = 0.2
_RENEW_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Lease:
    """Who holds a session (``owner``: one per process and store) and the fencing ``token`` of this hold."""

    owner: str
    token: int


class LeaseTable(Protocol):
    """The lease rows of a backend: three short statements, each its own transaction."""

    async def take(self, key: LeaseKey, owner: str, ttl_s: float, *, dead: str | None = None) -> int | None:
        """Take the lease when it is free or expired, or held by ``owner`` itself or by ``dead``: the new token;
        ``None`` when another holder has it (who: :meth:`holder`)."""
        ...

    async def holder(self, key: LeaseKey) -> str | None:
        """The owner of an unexpired lease on ``key``, else ``None``."""
        ...

    async def renew(self, owner: str, keys: Sequence[LeaseKey], ttl_s: float) -> set[LeaseKey]:
        """Extend ``owner``'s leases on ``keys``; returns the keys it still held (the rest were taken over)."""
        ...

    async def give_back(self, key: LeaseKey, lease: Lease) -> None:
        """Free the lease if this hold still has it."""
        ...


class LeaseRows:
    """``take``, ``holder`` and ``give_back`` of :class:`LeaseTable` over a backend's ``Sql`` and its clock: an
    expiry is :attr:`_later` (SQL for the clock plus ``?`` seconds) with the argument :meth:`_after` gives, and a
    lease given back expires at :attr:`_free`. A backend adds ``renew``."""

    #: SQL for a time: the backend's clock plus ``?`` seconds.
    _later: str
    #: SQL for the expiry of a lease given back (before any time).
    _free: str

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    def _after(self, seconds: float) -> Any:
        """The argument of one :attr:`_later`: ``seconds`` from now."""
        raise NotImplementedError

    async def take(self, key: LeaseKey, owner: str, ttl_s: float, *, dead: str | None = None) -> int | None:
        later = self._later

        async def body(tx: Tx) -> Row | None:
            return await tx.one(
                "INSERT INTO session_leases AS l (tenant, user_id, session_id, owner, token, expires_at) "
                f"VALUES (?, ?, ?, ?, 1, {later}) ON CONFLICT (tenant, user_id, session_id) DO UPDATE "
                "SET owner = excluded.owner, token = l.token + 1, expires_at = excluded.expires_at "
                f"WHERE l.owner IS NULL OR l.expires_at <= {later} OR l.owner IN (excluded.owner, ?) RETURNING token",
                (*key, owner, self._after(ttl_s), self._after(0.0), dead),
            )

        row = await self._sql.write(body, single=True)
        return None if row is None else int(row[0])

    async def holder(self, key: LeaseKey) -> str | None:
        row = await self._sql.one(
            "SELECT owner FROM session_leases WHERE tenant = ? AND user_id = ? AND session_id = ? "
            f"AND owner IS NOT NULL AND expires_at > {self._later}",
            (*key, self._after(0.0)),
        )
        return None if row is None else str(row[0])

    async def give_back(self, key: LeaseKey, lease: Lease) -> None:
        await self._sql.execute(
            f"UPDATE session_leases SET owner = NULL, expires_at = {self._free} "
            "WHERE tenant = ? AND user_id = ? AND session_id = ? AND owner = ? AND token = ?",
            (*key, lease.owner, lease.token),
            fenced=False,  # giving back carries no user's data
        )


def process_owner() -> str:
    """A fresh owner id: host, PID namespace and PID (so a dead holder on this machine is recognised) + a nonce."""
    return f"{socket.gethostname()}:{_pid_namespace()}:{os.getpid()}:{new_id('lease')}"


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "-"


def owner_alive(owner: str) -> bool:
    """False only when ``owner`` certainly died: a process of this host and PID namespace whose PID is gone."""
    host, _, rest = owner.partition(":")
    namespace, _, rest = rest.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != socket.gethostname() or namespace != _pid_namespace() or namespace == "-" or not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if pid == os.getpid():
        return True  # this process: alive by definition (its other stores hold their own leases)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- in-process FIFO ---------------------------------------------------------------------------------------------------


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holders and waiters; the entry is dropped at zero


class _LocalHeld:
    def __init__(self, owner: LocalSessionLocks, key: tuple[str, str], entry: _Entry) -> None:
        self._owner = owner
        self._key = key
        self._entry: _Entry | None = entry
        self.session_id = key[1]

    @property
    def lease(self) -> Lease | None:
        return None

    async def release(self) -> None:
        entry, self._entry = self._entry, None
        if entry is not None:
            entry.lock.release()
            self._owner._leave(self._key, entry)


class LocalSessionLocks:
    """In-process FIFO locks, one per session id, created on demand and forgotten when unused. Waiters are served
    in arrival order, so a session's turns run in the order they came."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    async def acquire(self, session_id: str, *, timeout: float | None = None, scope: str = "") -> _LocalHeld:
        """``scope`` keeps equal session ids of different users apart (the stores pass tenant and user).
        ``timeout=0`` takes the lock only if it is free right now."""
        key = (scope, session_id)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        if timeout is not None and timeout <= 0 and entry.lock.locked():
            raise _busy(session_id, 0)  # held: ``users`` counts its holder, so the entry stays
        entry.users += 1
        try:
            async with asyncio.timeout(timeout):
                await entry.lock.acquire()
        except TimeoutError:
            self._leave(key, entry)
            raise _busy(session_id, timeout) from None
        except BaseException:
            self._leave(key, entry)
            raise
        return _LocalHeld(self, key, entry)

    @asynccontextmanager
    async def hold(self, session_id: str, *, timeout: float | None = None) -> AsyncIterator[None]:
        held = await self.acquire(session_id, timeout=timeout)
        try:
            yield
        finally:
            await held.release()

    def _leave(self, key: tuple[str, str], entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0 and self._entries.get(key) is entry:
            del self._entries[key]


def lease_lost(session_id: str, turn: int, what: str) -> LeaseLost:
    """The error of a write whose hold on its session was taken over (the stores raise it)."""
    return LeaseLost(
        f"turn {turn} of session {session_id!r} was not {what}: this process's hold on the session lapsed and "
        "another process took the session over; nothing was written, retry the turn"
    )


def _busy(session_id: str, timeout: float | None) -> StoreBusy:
    return StoreBusy(
        f"session {session_id!r} is still busy with an earlier turn after {timeout or 0:g}s (possibly in another "
        "process); retry, or raise the lock timeout"
    )


# -- leases ------------------------------------------------------------------------------------------------------------


class HeldSession:
    """One hold of a session: the local lock and the lease row. ``release`` is idempotent."""

    def __init__(self, leases: SessionLeases, key: LeaseKey, local: _LocalHeld, lease: Lease) -> None:
        self._leases = leases
        self._key = key
        self._local: _LocalHeld | None = local
        self.lease: Lease | None = lease
        self.session_id = key[2]

    async def release(self) -> None:
        local, self._local = self._local, None
        if local is None:
            return
        lease, self.lease = self.lease, None
        try:
            if lease is not None:
                await self._leases._give_back(self._key, lease)
        finally:
            await local.release()


class SessionLeases:
    """Per-session holds for one store: see the module docstring. ``close`` stops the renewals (leases still held
    are given back)."""

    def __init__(self, table: LeaseTable, *, ttl_s: float = DEFAULT_SESSION_LEASE_S, owner: str | None = None) -> None:
        if not ttl_s > 0:
            raise InputError(f"the session lease must last a positive number of seconds, got {ttl_s}")
        self._table = table
        self.ttl_s = float(ttl_s)
        self.owner = owner or process_owner()
        self._local = LocalSessionLocks()
        self._held: dict[LeaseKey, Lease] = {}
        self._renewer: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def held(self) -> int:
        """Sessions this store holds right now."""
        return len(self._held)

    async def acquire(self, user: UserRef, session_id: str, *, timeout: float | None = None) -> HeldSession:
        """Wait until this turn holds the session (``StoreBusy`` after ``timeout`` seconds; ``0``: only if free)."""
        if self._closed:
            raise StoreBusy("this store is closing; no new turn can start")
        started = time.monotonic()
        key: LeaseKey = (user.tenant, user.user_id, session_id)
        local = await self._local.acquire(session_id, timeout=timeout, scope=f"{user.tenant}\x1f{user.user_id}")
        try:
            token = await self._take(key, session_id, started, timeout)
        except BaseException:
            await local.release()
            raise
        lease = Lease(self.owner, token)
        self._held[key] = lease
        self._start_renewing()
        return HeldSession(self, key, local, lease)

    async def _take(self, key: LeaseKey, session_id: str, started: float, timeout: float | None) -> int:
        pause = _POLL_FIRST_S
        dead: str | None = None
        while True:
            token = await self._table.take(key, self.owner, self.ttl_s, dead=dead)
            if token is not None:
                return token
            holder = await self._table.holder(key)
            if holder is not None and not owner_alive(holder):
                log.info("session %r was held by %s, which is no longer running: taking it over", session_id, holder)
                dead = holder
                continue
            dead = None
            left = None if timeout is None else timeout - (time.monotonic() - started)
            if left is not None and left <= 0:
                raise _busy(session_id, timeout)
            await asyncio.sleep(pause if left is None else min(pause, left))
            pause = min(pause * 2, _POLL_MAX_S)

    async def _give_back(self, key: LeaseKey, lease: Lease) -> None:
        if self._held.get(key) == lease:
            del self._held[key]
        try:
            await self._table.give_back(key, lease)
        except MemstackError as exc:  # it lapses after ttl_s instead
            log.warning("session %r not given back (%s); it frees itself within %gs", key[2], exc, self.ttl_s)

    def _start_renewing(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(
                self._renew_loop(), name="memstack-session-leases", context=detached()
            )

    async def _renew_loop(self) -> None:
        while self._held:
            await asyncio.sleep(self.ttl_s / 3)
            await self.renew()

    async def renew(self) -> None:
        """Extend every lease held now (one statement per thousand); log the ones another holder took over."""
        keys = list(self._held)
        for start in range(0, len(keys), _RENEW_BATCH):
            batch = keys[start : start + _RENEW_BATCH]
            try:
                kept = await self._table.renew(self.owner, batch, self.ttl_s)
            except MemstackError as exc:  # the next round tries again; fencing protects the writes meanwhile
                log.warning("renewing %d session lease(s) failed: %s", len(batch), exc)
                continue
            for key in batch:
                if key not in kept and key in self._held:
                    log.warning("session %r was taken over by another process; its turn's writes are refused", key[2])

    async def close(self) -> None:
        self._closed = True
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
            self._renewer = None
        for key, lease in list(self._held.items()):
            await self._give_back(key, lease)
