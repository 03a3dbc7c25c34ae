"""The storage contract: one small async Protocol per role.

A backend is one subpackage that implements every role and passes ``tests/store/test_contract.py``.
Every method is scoped by a :class:`~memstack.types.UserRef` *inside* the query, never filtered after.
Writes are transactions: on any failure nothing is half-written and a :class:`~memstack.errors.StoreError`
(or an :class:`~memstack.errors.InputError` for bad arguments) is raised.
"""

from __future__ import annotations

import builtins
import hashlib
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, Self, runtime_checkable

from memstack.errors import InputError
from memstack.retrieval.archive import ArchiveQuery
from memstack.store._webhooks import Webhooks
from memstack.store.leases import Lease
from memstack.types import (
    AgentRecord,
    ApiKey,
    ArchivedMessage,
    ArchivedTurn,
    ArchiveHit,
    ArchiveMatch,
    Artifact,
    BaseTruthSnapshot,
    DeletedBy,
    DroppedCaptures,
    ErasureReport,
    Fact,
    HiddenItem,
    HistoryAction,
    Job,
    Manifest,
    Memory,
    MemoryEvent,
    MemoryFilter,
    MemoryPatch,
    NewMemory,
    ScoredMemory,
    SessionState,
    SessionSummary,
    StoredResponse,
    TurnCommit,
    TurnVectors,
    UserRecord,
    UserRef,
    UserSummary,
    Vector,
    check_text,
)

__all__ = [
    "API_KEY_PREFIX",
    "DEFAULT_LEASE_S",
    "AgentStore",
    "ArchiveVectors",
    "CaptureDrops",
    "ChatThreads",
    "ContextStore",
    "HeldLock",
    "HiddenStore",
    "IdempotencyStore",
    "JobStore",
    "KeyStore",
    "MemoryIndex",
    "MemoryStore",
    "SessionArchive",
    "SessionStore",
    "Store",
    "UserData",
    "check_name",
    "hash_api_key",
    "new_api_key",
]


@runtime_checkable
class MemoryStore(Protocol):
    """Long-term memories and their append-only history."""

    async def add(
        self, user: UserRef, memory: NewMemory, embedding: Vector, *, limit: int | None = None, actor: str = "user"
    ) -> Memory:
        """Insert one memory. With ``limit``, raise ``LimitReached`` if the user already has that many active
        memories; the count and the insert are one transaction."""
        ...

    async def add_many(
        self, user: UserRef, memories: Sequence[NewMemory], embeddings: Vector, *, actor: str = "system"
    ) -> builtins.list[Memory]:
        """Bulk insert (imports, benchmarks, re-embedding): one transaction, no tier limit, history recorded."""
        ...

    async def get(self, user: UserRef, memory_id: str) -> Memory:
        """One memory, active or not (``NotFound`` if it is not this user's)."""
        ...

    async def update(
        self,
        user: UserRef,
        memory_id: str,
        patch: MemoryPatch,
        embedding: Vector | None = None,
        *,
        action: HistoryAction = HistoryAction.UPDATE,
        actor: str = "user",
        note: str = "",
    ) -> Memory:
        """Change fields (``embedding`` must accompany a content change) and record before/after."""
        ...

    async def forget(
        self,
        user: UserRef,
        memory_id: str,
        *,
        by: DeletedBy,
        merged_into: str | None = None,
        note: str = "",
        hide: Sequence[HiddenItem] = (),
    ) -> Memory:
        """Soft delete: inactive, restorable, history kept. ``merged_into`` records a consolidation. ``hide``: what
        the forget keeps from the model besides the memory (:class:`HiddenStore`), written in the same
        transaction, each item recorded as hidden by this memory."""
        ...

    async def restore(self, user: UserRef, memory_id: str, *, limit: int | None = None) -> Memory:
        """Make a soft-deleted memory active again (tier limit applies); in the same transaction, what its forget
        hid is shown again (unless another forgotten memory hides it too)."""
        ...

    async def delete(self, user: UserRef, memory_id: str, *, hide: Sequence[HiddenItem] = ()) -> None:
        """Permanent delete: the row and its vector are gone; a ``delete`` history row remains. What the memory's
        forget hid (and ``hide``, written in the same transaction) stays hidden for good: no restore can show it
        again; it goes when the user is erased."""
        ...


@runtime_checkable
class MemoryIndex(Protocol):
    """Reading memories back: listing, counting, nearest-neighbour and full-text search."""

    async def list(self, user: UserRef, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Newest first, filtered by category / text / agent / deleted, paged by limit and offset."""
        ...

    async def count_active(self, user: UserRef) -> int: ...

    async def history(self, user: UserRef, memory_id: str) -> builtins.list[MemoryEvent]:
        """Every create/update/forget/restore/merge/delete of one memory, oldest first."""
        ...

    async def nearest(
        self, user: UserRef, vector: Vector, k: int, flt: MemoryFilter | None = None
    ) -> builtins.list[ScoredMemory]:
        """The ``k`` active memories closest to ``vector`` by cosine similarity, best first, in one call
        (``flt.as_of``: among what held then, superseded past versions included; see ``_memory_reads.held``).

        Exactly ``min(k, matching memories)`` results: never fewer because of index post-filtering."""
        ...

    async def search_text(
        self, user: UserRef, query: str, k: int, *, as_of: datetime | None = None
    ) -> builtins.list[ScoredMemory]:
        """Active memories holding any stem of ``query`` (:mod:`memstack.text`: "running" finds "run"), ranked by
        BM25 over the user's active memories, best first (:mod:`memstack.store._fulltext`: the same order and
        scores on every backend). ``MemoryFilter.text`` of ``list`` and ``nearest`` needs every stem instead.
        ``as_of``: over what held then instead (as ``MemoryFilter.as_of``)."""
        ...


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


@runtime_checkable
class ContextStore(Protocol):
    """Context manifests, one per response: what the model saw (``memstack context explain``).

    A manifest is written once, keyed by its context id, and belongs to one ``(tenant, user)``. Manifests of a
    temporary chat are never stored: ``save`` refuses them."""

    async def save(self, user: UserRef, manifest: Manifest, *, session_id: str | None = None) -> None:
        """Keep ``manifest``. Raises ``InputError`` for a temporary chat's manifest or a context id already kept."""
        ...

    async def get(self, tenant: str, context_id: str, *, user_id: str | None = None) -> Manifest:
        """One manifest of ``tenant`` (and of ``user_id`` when given); ``NotFound`` otherwise."""
        ...

    async def recent(self, user: UserRef, *, session_id: str | None = None, limit: int = 20) -> builtins.list[Manifest]:
        """The user's latest manifests (of one session when given), newest first."""
        ...


#: How long a claimed job belongs to its worker before another may take it over (a crashed worker's jobs come back).
DEFAULT_LEASE_S = 60.0


@runtime_checkable
class JobStore(Protocol):
    """Durable background work: recorded before it starts, claimed under a lease, checkpointed, finished.

    A job is never lost to a crash: until ``complete`` or a final ``fail`` it stays claimable (``pending``, or
    ``running`` with a lapsed lease). Finished jobs are kept a while (for idempotency and inspection), their payload
    dropped, then pruned by the store."""

    async def enqueue(
        self,
        kind: str,
        key: str,
        payload: Mapping[str, Any],
        *,
        owner: str | None = None,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> Job:
        """Record a job, or return the one already recorded under ``(kind, key)`` unchanged.

        With ``owner``, a newly recorded job starts ``running``, claimed by that owner for ``lease_s`` seconds (the
        caller works on it at once); without, it starts ``pending``. Compare the returned job's ``owner`` with
        yours to know whether it is yours to run."""
        ...

    async def claim_pending(
        self, kind: str | None, limit: int, *, owner: str | None = None, lease_s: float = DEFAULT_LEASE_S
    ) -> builtins.list[Job]:
        """Claim up to ``limit`` jobs of ``kind`` (any kind if ``None``), oldest first: pending ones that are due,
        and running ones whose lease lapsed (their worker died). Each is ``running`` for ``owner``, attempts + 1.
        Concurrent callers never claim the same job."""
        ...

    async def checkpoint(self, job_id: str, state: Mapping[str, Any], *, lease_s: float = DEFAULT_LEASE_S) -> Job:
        """Replace the job's ``state`` (what is done so far) and extend its lease; ``NotFound`` if unknown."""
        ...

    async def complete(self, job_id: str, result: Mapping[str, Any] | None = None) -> None:
        """Mark done with ``result``; the payload is dropped (it may hold user text)."""
        ...

    async def fail(self, job_id: str, error: str, *, retry_at: datetime | None) -> None:
        """Record ``error``. With ``retry_at`` the job is pending again from then on; without, it is given up."""
        ...

    async def get(self, job_id: str) -> Job:
        """One job by id (``NotFound`` if unknown or pruned)."""
        ...


# -- tenants: API keys and agent definitions ---------------------------------------------------------------------------

#: Every secret starts with this, so a leaked key is recognisable (and secret scanners can be taught it).
API_KEY_PREFIX = "msk_"


def new_api_key() -> str:
    """A fresh secret: ``msk_`` + 40 characters (240 random bits, URL-safe)."""
    return API_KEY_PREFIX + secrets.token_urlsafe(30)


def check_name(kind: str, value: str) -> str:
    """Tenant, key and agent names for the stores: 1-200 printable characters (an empty key name is allowed)."""
    if isinstance(value, str):
        check_text(value, kind)
    if not isinstance(value, str) or len(value) > 200 or not value.isprintable() or (kind != "key name" and not value):
        raise InputError(f"{kind} must be 1-200 printable characters, got {value!r}")
    return value


def hash_api_key(secret: str) -> str:
    """What a store keeps instead of the secret. A plain SHA-256 is enough: the secret is random, not a password."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


@runtime_checkable
class KeyStore(Protocol):
    """API keys: each scopes every request made with it to one tenant. Only hashes are stored."""

    async def create(self, tenant: str, *, name: str = "") -> tuple[ApiKey, str]:
        """A new key for ``tenant``: its record and the secret, which is never available again."""
        ...

    async def authenticate(self, secret: str) -> ApiKey | None:
        """The active key whose secret this is; ``None`` for an unknown or revoked one."""
        ...

    async def list(self, tenant: str | None = None, *, include_revoked: bool = False) -> builtins.list[ApiKey]:
        """Keys of one tenant (every tenant when ``None``), oldest first."""
        ...

    async def revoke(self, key_id: str) -> ApiKey:
        """Revoke by public id (``key_…``); ``NotFound`` if there is no such key. Revoking twice is harmless."""
        ...


@runtime_checkable
class AgentStore(Protocol):
    """Agent definitions stored per tenant (the plain values of an agent YAML), by name."""

    async def put(self, tenant: str, name: str, definition: dict[str, Any]) -> AgentRecord:
        """Create or replace; the caller validates the definition first."""
        ...

    async def get(self, tenant: str, name: str) -> AgentRecord:
        """``NotFound`` if this tenant has no agent of that name."""
        ...

    async def list(self, tenant: str) -> builtins.list[AgentRecord]:
        """The tenant's agents by name."""
        ...

    async def delete(self, tenant: str, name: str) -> None:
        """``NotFound`` if this tenant has no agent of that name."""
        ...


@runtime_checkable
class CaptureDrops(Protocol):
    """Automatic captures a full tier kept from being stored, counted per user (what ``usage`` reports as
    ``dropped``): one row per user, exported and erased with the user's other data."""

    async def record(self, user: UserRef, *, at: datetime) -> None:
        """Count one more for ``user`` (the first time is kept, the last one moves to ``at``)."""
        ...

    async def get(self, user: UserRef) -> DroppedCaptures:
        """The user's count; zero (and no times) for a user no limit ever stopped."""
        ...


@runtime_checkable
class ChatThreads(Protocol):
    """Where a conversation that a client keeps (and sends whole with every call, as OpenAI's chat completions API
    does) continues: after each turn, a digest of the messages the client then holds names the turn's session and
    number, so the next call that starts with exactly those messages finds its session, and one that starts the
    same way with other messages does not."""

    async def mark(self, user: UserRef, digest: str, session_id: str, turn: int) -> None:
        """Record (or move) ``digest`` → this session's turn."""
        ...

    async def find(self, user: UserRef, digest: str) -> tuple[str, int] | None:
        """The session and turn of ``digest``; ``None`` when this store never saw that conversation state."""
        ...


@runtime_checkable
class IdempotencyStore(Protocol):
    """Responses to HTTP writes sent with an ``Idempotency-Key`` (:mod:`memstack.server.idempotency`), one record
    per ``(tenant, key)``: the first request claims the key, its response is kept until the record expires, and a
    retry is answered from it, in any process sharing the store. Records belong to a user (erased with them)."""

    async def claim(
        self,
        user: UserRef,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        ttl_s: float,
        stale_s: float,
        take_answered: bool = False,
    ) -> StoredResponse | None:
        """``None`` when the key is now this request's (kept ``ttl_s`` seconds): there was no record, an expired
        one, or a claim by the same request still unanswered after ``stale_s`` seconds (its process died), or, with
        ``take_answered``, an answered one (the key is a turn to take, not a request done once:
        :mod:`memstack.server.single_flight`). Else the record as it stands: another request's, or this one's in
        flight or answered."""
        ...

    async def complete(
        self, user: UserRef, key: str, fingerprint: str, status: int, body: bytes, content_type: str
    ) -> None:
        """Keep the response of the request that claimed the key."""
        ...

    async def release(self, user: UserRef, key: str, fingerprint: str) -> None:
        """Give up an unanswered claim (the request failed in a way worth retrying): the next request runs anew."""
        ...

    async def sweep(self, *, now: datetime) -> int:
        """Delete expired records; how many went."""
        ...


@runtime_checkable
class UserData(Protocol):
    """Everything a store holds about one ``(tenant, user)``, as a whole: handed over (data access) or erased
    (data deletion). The two cover the same tables; a table added to hold user data must be added to both (the
    contract test ``tests/store/test_users_contract.py`` reads the tables from the database catalogue and fails
    otherwise)."""

    def export(self, user: UserRef) -> AsyncIterator[UserRecord]:
        """The user's data a record at a time, read in pages (a large user is never held in memory at once):
        memories (active, forgotten, superseded; and those permanently deleted whose history remains), each with
        its history and what its forget hides (``hides``); sessions, each with its facts, turn log, archived
        messages, artifacts and snapshots; stored context manifests; background jobs recorded for the user. Vectors
        and kept HTTP responses (``idempotency``) are not exported. A user the store has never seen yields
        nothing."""
        ...

    async def erase(self, user: UserRef) -> ErasureReport:
        """Remove every row of the user in one transaction (memories, history, hidden items, full-text terms,
        vectors and per-user search indexes, sessions with their turn log, archive, artifacts and snapshots, archive
        statistics, context manifests, session leases, background jobs, responses kept under idempotency keys) and
        say how many rows of each table went. The same transaction gives the user a new erasure epoch
        (:mod:`memstack.store.fence`): from its commit on, every write of work that pinned the old one is refused
        (``UserErased``), in any process sharing the store. A pending job removed here is never claimed again.
        Erasing a user the store has never seen removes nothing and is not an error. On SQLite the erased text is
        then gone from every file of the store (the database, its write-ahead log, its full-text indexes)."""
        ...

    async def load(
        self,
        user: UserRef,
        document: Mapping[str, builtins.list[dict[str, Any]]],
        vectors: Mapping[str, Vector],
        *,
        merge: bool = False,
    ) -> dict[str, int]:
        """Import: write the sections of an export document (``memories``, ``sessions``, ``contexts``, ``jobs``,
        ``dropped_captures``, as :meth:`export` reads them back) for ``user`` in one transaction under the caller's
        erasure fence, keeping ids, history and times; ``vectors``: each stored memory's, by id. The archived
        messages' vectors are not written (the engine embeds them again). ``ImportConflict`` when the user holds
        data already, or the document names ids another user holds; nothing is written then. Rows per table
        (:mod:`memstack.store._users_load`)."""
        ...

    async def list(self, tenant: str, *, after: str | None = None, limit: int = 100) -> builtins.list[UserSummary]:
        """The tenant's users (anyone with a memory, forgotten ones included, or a session) in user-id order (byte
        order on every backend), after the cursor ``after`` (the last id of the previous page), at most ``limit``
        (1-1000), each with its active memories, sessions and last change. ``InputError`` for a bad limit."""
        ...

    async def epoch(self, user: UserRef) -> int:
        """The user's erasure epoch (``0`` when never erased): what work pins before it reads the user's data
        (:mod:`memstack.store.fence`)."""
        ...


class Store(Protocol):
    """A backend: owns its connections, created with the embedding dimension it stores."""

    @property
    def memories(self) -> MemoryStore: ...

    @property
    def index(self) -> MemoryIndex: ...

    @property
    def search_index(self) -> MemoryIndex:
        """The index that answers searches (retrieval for the context, ``search``, ``recall``): a read replica's
        when the backend has one configured, whose results may lag the writes by the replication delay; else
        :attr:`index`. Reads a write depends on (dedup, limits) use :attr:`index`."""
        ...

    @property
    def keys(self) -> KeyStore: ...

    @property
    def agents(self) -> AgentStore: ...

    @property
    def contexts(self) -> ContextStore: ...

    @property
    def jobs(self) -> JobStore: ...

    @property
    def sessions(self) -> SessionStore: ...

    @property
    def archive(self) -> SessionArchive: ...

    @property
    def archive_vectors(self) -> ArchiveVectors: ...

    @property
    def users(self) -> UserData: ...

    @property
    def hidden(self) -> HiddenStore: ...

    @property
    def threads(self) -> ChatThreads: ...

    @property
    def idempotency(self) -> IdempotencyStore: ...

    @property
    def drops(self) -> CaptureDrops: ...

    @property
    def webhooks(self) -> Webhooks:
        """A tenant's webhook endpoints and the outbox of their deliveries: one implementation over both backends'
        SQL (:mod:`memstack.store._webhooks`)."""
        ...

    @property
    def dim(self) -> int: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def close(self) -> None: ...
