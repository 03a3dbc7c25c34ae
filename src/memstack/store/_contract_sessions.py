"""The session roles of the storage contract (:mod:`memstack.store.base`, which exports them): a session's lock
(``HeldLock``), state and turns (``SessionStore``), the archive read back (``SessionArchive``) and its vectors
(``ArchiveVectors``), and what forgotten memories hide (``HiddenStore``)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from memstack.retrieval.archive import ArchiveQuery
from memstack.store.leases import Lease
from memstack.types import (
    ArchivedMessage,
    ArchivedTurn,
    ArchiveHit,
    ArchiveMatch,
    Artifact,
    BaseTruthSnapshot,
    Fact,
    HiddenItem,
    SessionState,
    SessionSummary,
    TurnCommit,
    TurnVectors,
    UserRef,
)

__all__ = ["ArchiveVectors", "HeldLock", "HiddenStore", "SessionArchive", "SessionStore"]


class HeldLock(Protocol):
    """One acquisition of a session's lock; ``release`` is idempotent. ``lease``: the fencing ``(owner, token)``
    a turn's writes carry (``None`` for a lock that is in-process only, as a temporary chat's)."""

    @property
    def session_id(self) -> str: ...

    @property
    def lease(self) -> Lease | None: ...

    async def release(self) -> None: ...


@runtime_checkable
class SessionStore(Protocol):
    """Per-session memory and the life of a turn (seed 04): the session row, base truth, the turn log and the
    exchange archive it is kept in, and the per-session lock.

    A turn: ``acquire`` the session → ``open`` the state → (phase 1) → ``record`` the raw exchange (durable,
    flagged pending; the reply is acknowledged after this) → (phase 2) → ``commit`` → release. ``pending`` finds
    what a crash or a failed summary left flagged.

    The hold is a lease (:mod:`memstack.store.leases`): no connection is held between calls, several processes
    may share the store, and ``record`` and ``commit`` given the hold's ``lease`` refuse to write
    (``LeaseLost``) once another process has taken the session over.
    """

    async def acquire(self, user: UserRef, session_id: str, *, timeout: float | None = None) -> HeldLock:
        """Wait until no other turn of this session, in any process sharing the store, holds it; ``StoreBusy``
        after ``timeout`` seconds (``0``: only if it is free now)."""
        ...

    async def open(
        self,
        user: UserRef,
        session_id: str,
        *,
        agent: str | None = None,
        create: bool = True,
        window_turns: int = 5,
        now: datetime | None = None,
    ) -> SessionState:
        """The session's state: base truth, the whole turn log, the raw messages of its last ``window_turns``
        recorded turns (pending ones included; the caller evicts), flagged turns. Creates it when ``create``
        (else ``NotFound``); an ended session opened again is resumed. ``InputError`` if ``agent`` differs from the
        agent the session was started with."""
        ...

    async def record(self, user: UserRef, turn: ArchivedTurn, *, lease: Lease | None = None) -> None:
        """Archive a raw exchange as turn ``turn_count + 1`` with status pending, before phase 2 starts.
        ``SessionConflict`` when that turn was recorded already (another process); with ``lease``, ``LeaseLost``
        (nothing written) when that hold no longer has the session."""
        ...

    async def commit(
        self,
        user: UserRef,
        session_id: str,
        commit: TurnCommit,
        *,
        now: datetime | None = None,
        lease: Lease | None = None,
    ) -> None:
        """One transaction: the turn's summary and status, base truth, artifacts (replacing the turn's earlier
        ones), snapshots, the consolidation mark. ``SessionConflict`` when the session's version moved on from
        ``commit.expected_version``; with ``lease``, ``LeaseLost`` when that hold no longer has the session."""
        ...

    async def pending(self, *, limit: int = 100) -> builtins.list[ArchivedTurn]:
        """Flagged turns of every user (pending or unsummarized), oldest first: the startup scan."""
        ...

    async def end(
        self, user: UserRef, session_id: str, line: str, *, through_turn: int, ended: bool, now: datetime | None = None
    ) -> SessionSummary:
        """Write the session's cross-session line (written after ``through_turn``); ``ended`` also closes it."""
        ...


@runtime_checkable
class SessionArchive(Protocol):
    """Reading sessions back: listings, the archive of raw exchanges (full-text search, paging for index builds),
    artifacts and base-truth snapshots. Every call is scoped to one user."""

    async def sessions(
        self, user: UserRef, *, limit: int = 50, offset: int = 0, with_line: bool = False, session_id: str | None = None
    ) -> builtins.list[SessionSummary]:
        """The user's sessions, most recently active first; ``with_line``: only those with a cross-session line;
        ``session_id``: only that one (an empty list when the user has no such session)."""
        ...

    async def turns(
        self,
        user: UserRef,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> builtins.list[ArchivedTurn]:
        """Archived exchanges in time order (one session's in turn order); ``since`` skips older ones."""
        ...

    async def search(
        self, user: UserRef, query: str, k: int, *, session_id: str | None = None
    ) -> builtins.list[ArchiveHit]:
        """Archived exchanges holding any stem of ``query``, ranked by BM25 over the user's exchanges (both
        messages of one are one document), best first; the same on every backend."""
        ...

    async def artifacts(self, user: UserRef, session_id: str, *, turn: int | None = None) -> builtins.list[Artifact]:
        """Code blocks and drafts of a session (one turn's with ``turn``), in turn order."""
        ...

    async def snapshots(self, user: UserRef, session_id: str, *, limit: int = 20) -> builtins.list[BaseTruthSnapshot]:
        """The latest base-truth snapshots of a session, oldest first."""
        ...


@runtime_checkable
class ArchiveVectors(Protocol):
    """Vectors of archived messages, and hybrid recall over them (:mod:`memstack.recall`).

    Each archived exchange has two messages (the user's, the reply); their vectors are written once, after phase 2
    of the turn or by an import, in batches, never while answering a query. ``search`` ranks a user's messages with
    the formula of :mod:`memstack.retrieval.archive`; where the store lives in the process (``embedded``), recall
    may instead keep its own index of a user's messages in memory and read only what was written since it last
    looked (``messages(after=...)``). ``memstack reembed`` re-embeds these vectors with the others: the table is one
    of :func:`memstack.store.reembed.vector_tables`."""

    @property
    def embedded(self) -> bool:
        """True when the store runs in this process (SQLite): an in-memory index of a user's archive is cheap to
        keep current; False when a database server ranks the archive (PostgreSQL)."""
        ...

    async def search(
        self, user: UserRef, query: ArchiveQuery, k: int, *, exclude_session: str | None = None
    ) -> builtins.list[ArchiveMatch]:
        """The user's ``k`` best archived messages for ``query`` (each with a positive score), best first, as
        :meth:`memstack.retrieval.archive.UserArchive.rank` ranks them over every message with a vector (scores
        equal to float rounding); ``exclude_session``'s messages are left out of the results."""
        ...

    async def put(self, user: UserRef, vectors: Sequence[TurnVectors]) -> int:
        """Store the vectors of archived exchanges of ``user`` (a message already stored is left as it is);
        returns how many messages were written. ``NotFound`` when an exchange is not in the user's archive."""
        ...

    async def messages(self, user: UserRef, *, after: int = 0, limit: int = 1000) -> builtins.list[ArchivedMessage]:
        """The user's archived messages that have a vector, with it, ordered by ``seq`` (the order they were
        written in), those with ``seq > after`` only. Per user, a later write always has a greater ``seq`` than
        any write already visible, so paging with the last ``seq`` seen never misses one."""
        ...

    async def missing(self, *, limit: int = 100) -> builtins.list[ArchivedTurn]:
        """Archived exchanges of any user whose vectors were never written, oldest first (the startup backfill
        after a crash between archiving and embedding, or of archives older than this table)."""
        ...


@runtime_checkable
class HiddenStore(Protocol):
    """What forgotten memories hide from the model besides themselves (:mod:`memstack.types.forget`): one row per
    hidden item and the memory whose forget hides it, written by ``MemoryStore.forget`` / ``delete`` and removed by
    ``restore``. The stored texts themselves are never changed, so a restore shows exactly what was hidden again.

    Every read that feeds a model applies them inside its queries: ``SessionStore.open`` (the raw window, the turn
    log and base truth leave hidden exchanges and facts out), ``SessionArchive.sessions`` (a hidden line reads as
    empty, and ``with_line`` skips it), ``SessionArchive.search`` and ``ArchiveVectors.search`` (hidden exchanges'
    messages are never found, nor shown as the message before one that is). ``SessionArchive.turns`` and the export
    are the record: they include hidden exchanges. A process that ranks an archive in memory asks :meth:`version`
    with each query and reads :meth:`hidden` again when it moved."""

    async def hidden(self, user: UserRef, *, memory_id: str | None = None) -> builtins.list[HiddenItem]:
        """The user's hidden items (those one memory hides, with ``memory_id``), in the order they were hidden."""
        ...

    async def version(self, user: UserRef) -> tuple[int, int]:
        """Changes whenever the user's hidden items do (a hide or a restore, in any process): one indexed read."""
        ...

    async def mentions(
        self,
        user: UserRef,
        terms: Sequence[str],
        *,
        turn_ids: Sequence[str] = (),
        said_at: Sequence[datetime] = (),
        limit: int = 1000,
    ) -> builtins.list[ArchivedTurn]:
        """The user's archived exchanges holding any of ``terms`` (stored stems, :mod:`memstack.text`; the newest
        ``limit``), named in ``turn_ids`` (``session_id:turn``) or said at one of the times ``said_at`` (exactly),
        hidden ones included, newest first: the exchanges a forget looks at."""
        ...

    async def session_texts(
        self, user: UserRef, session_ids: Sequence[str]
    ) -> builtins.list[tuple[str, str, tuple[Fact, ...]]]:
        """``(session_id, line, base truth)`` of each of the user's sessions named, as stored (hidden facts and
        lines included)."""
        ...
