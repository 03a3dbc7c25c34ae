"""A user's archived messages ranked for a query: by the store, or from a bounded in-memory index kept current.

Where the database is a server (PostgreSQL) it ranks the archive itself (``store.archive_vectors.search``: its
full-text and vector indexes find the messages that can score, and the one formula of
:mod:`memstack.retrieval.archive` ranks them), so every worker process answers from the same data and none holds a
copy of any user's archive.

Where the store lives in this process (SQLite, ``store.archive_vectors.embedded``), ranking a user's messages in
memory is cheaper than reading them for each query, so this keeps, per user, a
:class:`~memstack.retrieval.archive.UserArchive` and the ``seq`` of the last message it read. Each query first asks
the store for what was written after that ``seq`` (one indexed query, usually empty), so messages archived by this
process or any other sharing the database are found on the next query, and nothing is embedded while answering.
Messages only go away all at once, when their user is erased (:meth:`memstack.engine.AsyncMemstack.erase`): this
process drops its index of the user then, and an index kept by another process notices on its next query, which
also reads the user's first message (one more indexed query, of one row) and starts over when it is not the one
the index began with.
Exchanges hidden by a forgotten memory (:class:`~memstack.store.base.HiddenStore`) stay in the index but are never
ranked: each query also reads the user's hidden version (one indexed query, a count and a key), and when it moved
(a forget or a restore, in this process or another) reads the hidden exchanges again and marks them
(:meth:`~memstack.retrieval.archive.UserArchive.hide`).
The cache holds at most ``max_messages`` messages, all users together: users are evicted least-recently-used, and a
user larger than that is ranked by the store instead. ``max_messages=0`` turns the cache off.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from memstack.retrieval import RetrievalSettings
from memstack.retrieval.archive import ArchiveQuery, UserArchive, message_text
from memstack.store.base import Store
from memstack.types import ArchiveMatch, HiddenKind, UserRef

__all__ = ["ArchiveIndex", "UserArchive", "message_text"]

#: Messages read from the store per query while catching up.
_PAGE = 2000


class ArchiveIndex:
    """Ranks a user's archived messages; on an embedded store from per-user indexes kept in memory (bounded)."""

    def __init__(self, store: Store, settings: RetrievalSettings | None = None, *, max_messages: int = 50_000) -> None:
        self.store = store
        self.settings = settings or RetrievalSettings()
        self.max_messages = max_messages
        self._users: OrderedDict[tuple[str, str], UserArchive] = OrderedDict()
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._too_large: set[tuple[str, str]] = set()
        self._first: dict[tuple[str, str], int] = {}  # the seq of the first message each index holds
        self._hidden: dict[tuple[str, str], tuple[int, int]] = {}  # the hidden version each index applied

    @property
    def cached(self) -> bool:
        """Whether this ranks from memory (an embedded store and a budget above zero)."""
        return self.max_messages > 0 and self.store.archive_vectors.embedded

    @property
    def cached_messages(self) -> int:
        return sum(len(a) for a in self._users.values())

    async def search(
        self, user: UserRef, query: ArchiveQuery, k: int, *, exclude_session: str | None = None
    ) -> list[ArchiveMatch]:
        """The ``k`` best archived messages for ``query``, best first (each with a positive score)."""
        archive = await self.current(user) if self.cached else None
        if archive is None:
            return await self.store.archive_vectors.search(user, query, k, exclude_session=exclude_session)
        return archive.rank(query, k, exclude_session=exclude_session)

    async def current(self, user: UserRef) -> UserArchive | None:
        """The user's in-memory index with every message written so far (one store query when nothing is new);
        ``None`` when this does not rank from memory, or the user alone holds more than ``max_messages``."""
        if not self.cached:
            return None
        key = (user.tenant, user.user_id)
        if key in self._too_large:
            return None
        archive = self._users.get(key)
        if archive is None:
            archive = self._users[key] = UserArchive(self.settings)
        self._users.move_to_end(key)
        async with self._locks.setdefault(key, asyncio.Lock()):
            if archive.seq > 0:  # still the archive this index began with? (not if the user was erased since)
                head = await self.store.archive_vectors.messages(user, after=0, limit=1)
                if not head or head[0].seq != self._first.get(key):
                    archive = self._users[key] = UserArchive(self.settings)
                    self._hidden.pop(key, None)
            while True:
                rows = await self.store.archive_vectors.messages(user, after=archive.seq, limit=_PAGE)
                if rows and archive.seq == 0:
                    self._first[key] = rows[0].seq
                archive.add(rows)
                if len(archive) > self.max_messages:
                    self._too_large.add(key)  # bounded: this user is ranked by the store from now on
                    self.forget(user)
                    return None
                if len(rows) < _PAGE:
                    break
            version = await self.store.hidden.version(user)
            if self._hidden.get(key) != version:
                hidden = await self.store.hidden.hidden(user)
                archive.hide((i.session_id, i.turn) for i in hidden if i.kind is HiddenKind.TURN)
                self._hidden[key] = version
        self._evict(keep=key)
        return archive

    def forget(self, user: UserRef) -> None:
        """Drop the user's cached index (it is read again on the next query)."""
        key = (user.tenant, user.user_id)
        self._users.pop(key, None)
        self._locks.pop(key, None)
        self._first.pop(key, None)
        self._hidden.pop(key, None)

    def _evict(self, *, keep: tuple[str, str]) -> None:
        total = self.cached_messages
        for key in list(self._users):
            if total <= self.max_messages:
                return
            if key != keep:
                total -= len(self._users.pop(key))
                self._locks.pop(key, None)
                self._first.pop(key, None)
                self._hidden.pop(key, None)
