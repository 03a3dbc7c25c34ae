"""Each user's archived messages as a :class:`~memstack.retrieval.HybridRetriever`, kept in memory and kept current.

The store holds the messages and their vectors (``store.archive_vectors``, written after phase 2 or by an import);
this cache holds, per user, the retriever built from them and the ``seq`` of the last message it read. Each recall
first asks the store for what was written after that ``seq`` (one indexed query, usually empty), so messages
archived by this process or any other sharing the database are found on the next query, and nothing is embedded
while answering. Users are evicted least-recently-used when the cache holds more than ``max_messages``.

A message normally arrives after the earlier messages of its session. If one arrives out of order (a backfill of
an older turn), the user's retriever is rebuilt in session order, since a message's lexical key includes the
message before it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from memstack.retrieval import HybridRetriever, Passage, RetrievalSettings
from memstack.store.base import Store
from memstack.types import ArchivedMessage, UserRef

__all__ = ["ArchiveIndex", "UserArchive", "message_text"]

#: Messages read from the store per query while catching up.
_PAGE = 2000


def message_text(text: str, speaker: str | None) -> str:
    """What is indexed and embedded for a message: ``"Speaker: text"`` when its speaker is known."""
    return f"{speaker}: {text}" if speaker else text


def _order(message: ArchivedMessage) -> tuple[int, int]:
    return (message.turn, 0 if message.role == "user" else 1)


@dataclass(eq=False)
class UserArchive:
    """One user's indexed messages: ``messages[i]`` is passage ``i`` of ``retriever`` (without its vector)."""

    settings: RetrievalSettings
    retriever: HybridRetriever = field(init=False)
    messages: list[ArchivedMessage] = field(default_factory=list)
    seq: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _last: dict[str, tuple[int, int]] = field(default_factory=dict)
    _threads: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.retriever = HybridRetriever(self.settings)

    def __len__(self) -> int:
        return len(self.messages)

    def thread_of(self) -> dict[str, int]:
        """Session id → its number among the user's sessions (the retriever's thread order)."""
        return self._threads

    def add(self, rows: Sequence[ArchivedMessage]) -> None:
        """Index ``rows`` (in ``seq`` order); rebuilds in session order when one comes before its session's last."""
        if not rows:
            return
        self.seq = max(self.seq, max(r.seq for r in rows))
        in_order = True
        last = dict(self._last)
        for row in rows:
            if row.session_id in last and _order(row) <= last[row.session_id]:
                in_order = False
                break
            last[row.session_id] = _order(row)
        if not in_order:
            self._rebuild([*self._stored_rows(), *rows])
            return
        self._append(rows)

    def _stored_rows(self) -> list[ArchivedMessage]:
        vectors = self.retriever.vectors
        return [replace(m, embedding=vectors[i]) for i, m in enumerate(self.messages)]

    def _rebuild(self, rows: Sequence[ArchivedMessage]) -> None:
        unique = {r.id: r for r in rows}
        first_seen: dict[str, int] = {}
        for r in sorted(unique.values(), key=lambda r: r.seq):
            first_seen.setdefault(r.session_id, r.seq)
        ordered = sorted(unique.values(), key=lambda r: (first_seen[r.session_id], _order(r)))
        self.retriever = HybridRetriever(self.settings)
        self.messages = []
        self._last = {}
        self._threads = {}
        self._append(ordered)

    def _append(self, rows: Sequence[ArchivedMessage]) -> None:
        passages = []
        for r in rows:
            self._threads.setdefault(r.session_id, len(self._threads))
            self._last[r.session_id] = _order(r)
            passages.append(Passage(r.id, message_text(r.text, r.speaker), r.at, r.session_id))
        matrix = np.stack([np.asarray(r.embedding, dtype=np.float32) for r in rows])
        self.retriever.add(passages, matrix)
        self.messages.extend(replace(r, embedding=None) for r in rows)


class ArchiveIndex:
    """Per-user retrievers over archived messages, read from ``store.archive_vectors`` and kept current."""

    def __init__(self, store: Store, settings: RetrievalSettings | None = None, *, max_messages: int = 50_000) -> None:
        self.store = store
        self.settings = settings or RetrievalSettings()
        self.max_messages = max_messages
        self._users: OrderedDict[tuple[str, str], UserArchive] = OrderedDict()

    @property
    def cached_messages(self) -> int:
        return sum(len(a) for a in self._users.values())

    async def current(self, user: UserRef) -> UserArchive:
        """The user's index with every message written so far (one store query when nothing is new)."""
        key = (user.tenant, user.user_id)
        archive = self._users.get(key)
        if archive is None:
            archive = self._users[key] = UserArchive(self.settings)
        self._users.move_to_end(key)
        async with archive.lock:
            while True:
                rows = await self.store.archive_vectors.messages(user, after=archive.seq, limit=_PAGE)
                archive.add(rows)
                if len(rows) < _PAGE:
                    break
        self._evict(keep=key)
        return archive

    def forget(self, user: UserRef) -> None:
        """Drop the user's cached index (it is read again on the next query)."""
        self._users.pop((user.tenant, user.user_id), None)

    def _evict(self, *, keep: tuple[str, str]) -> None:
        total = self.cached_messages
        for key in list(self._users):
            if total <= self.max_messages:
                return
            if key != keep:
                total -= len(self._users.pop(key))
