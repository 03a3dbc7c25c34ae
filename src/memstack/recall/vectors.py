"""Embedding archived exchanges, in batches, after they are archived: never while answering a query.

Three callers: phase 2 of a chat turn (the turn's two messages, in the background after the session lock is
released), an import (:mod:`memstack.recall.ingest`: every message of the import in batches), and the startup
backfill (:meth:`TurnVectorizer.backfill`: exchanges archived without vectors, after a crash between archiving and
embedding, or before the store had vectors). Writing is idempotent, so two of them meeting on one turn is harmless.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from memstack.embed import Embedder
from memstack.errors import MemstackError, NotFound, UserErased
from memstack.recall.index import message_text
from memstack.store.base import Store
from memstack.store.fence import Fence, fenced
from memstack.types import ArchivedTurn, TurnVectors, UserRef, Vector

__all__ = ["ExchangeText", "TurnVectorizer"]

log = logging.getLogger("memstack.recall")


@dataclass(frozen=True, slots=True)
class ExchangeText:
    """One archived exchange to embed: its id, both messages and who said them (when known)."""

    session_id: str
    turn: int
    user: str
    assistant: str
    user_speaker: str | None = None
    assistant_speaker: str | None = None

    def messages(self) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
        """``(text, speaker)`` of the user's message, then of the reply."""
        return ((self.user, self.user_speaker), (self.assistant, self.assistant_speaker))

    @classmethod
    def of(cls, turn: ArchivedTurn) -> ExchangeText:
        return cls(turn.session_id, turn.turn, turn.user, turn.assistant)


class TurnVectorizer:
    """Embeds archived exchanges ``batch`` texts at a time and writes their vectors (``store.archive_vectors``)."""

    def __init__(self, store: Store, embedder: Embedder, *, batch: int = 64) -> None:
        self.store = store
        self.embedder = embedder
        self.batch = max(1, batch)
        self._importing: dict[tuple[str, str, str], int] = {}

    @contextmanager
    def importing(self, user: UserRef, session_id: str) -> Iterator[None]:
        """Mark the session as being imported (its vectors are written by the import) while the block runs."""
        key = (user.tenant, user.user_id, session_id)
        self._importing[key] = self._importing.get(key, 0) + 1
        try:
            yield
        finally:
            self._importing[key] -= 1
            if not self._importing[key]:
                del self._importing[key]

    async def embed(
        self, user: UserRef, exchanges: Sequence[ExchangeText], *, known: Mapping[str, Vector] | None = None
    ) -> int:
        """Embed and store both messages of each exchange (a blank message is recorded without a vector); returns
        how many messages were written. ``known``: vectors already computed, by the text embedded (a chat turn's
        message, embedded once for retrieval), used instead of embedding that text again."""
        written = 0
        known = known or {}
        step = max(1, self.batch // 2)
        for start in range(0, len(exchanges), step):
            part = exchanges[start : start + step]
            texts = [None if not t.strip() else message_text(t, who) for ex in part for t, who in ex.messages()]
            todo = list(dict.fromkeys(t for t in texts if t is not None and t not in known))
            fresh = await self.embedder.embed(todo) if todo else np.zeros((0, self.embedder.dim), np.float32)
            vectors = {**dict(zip(todo, fresh, strict=True)), **known}
            rows: list[Vector | None] = [None if t is None else vectors[t] for t in texts]
            batch = [
                TurnVectors(ex.session_id, ex.turn, rows[2 * i], rows[2 * i + 1], ex.user_speaker, ex.assistant_speaker)
                for i, ex in enumerate(part)
            ]
            written += await self.store.archive_vectors.put(user, batch)
        return written

    async def backfill(self, *, limit: int = 200) -> int:
        """Embed every archived exchange that has no vectors yet, ``limit`` at a time, oldest first; returns how
        many exchanges were embedded. Stops (logging why) when a batch fails: the next start continues. Exchanges
        of sessions being imported are the import's to embed: when a batch holds only those, the backfill ends."""
        done = 0
        while True:
            found = await self.store.archive_vectors.missing(limit=limit)
            missing = [t for t in found if (t.tenant, t.user_id, t.session_id) not in self._importing]
            if not missing:
                return done
            by_user: dict[tuple[str, str], list[ArchivedTurn]] = {}
            for turn in missing:
                by_user.setdefault((turn.tenant, turn.user_id), []).append(turn)
            try:
                for (tenant, user_id), turns in by_user.items():
                    user = UserRef(user_id, tenant)
                    # Under a fence pinned now (the turns were read before it): a user erased since has no turns to
                    # embed (NotFound), one erased during it has its write refused; neither stops the backfill.
                    with fenced(Fence(user, await self.store.users.epoch(user))):
                        try:
                            await self.embed(user, [ExchangeText.of(t) for t in turns])
                        except (NotFound, UserErased):
                            log.info("archived turns of %s/%s not embedded: the user was erased", tenant, user_id)
            except MemstackError as exc:
                log.warning("embedding archived turns stopped after %d: %s: %s", done, type(exc).__name__, exc)
                return done
            done += len(missing)
