"""``engine.sessions``: reading a user's sessions back (what ``memstack sessions``, ``GET /v1/sessions/…`` and the
web UI show): the list, one session's memory, its archived turns, base-truth snapshots and artifacts, and full-text
search over the user's past exchanges.

Every call is scoped to one user, named as the engine's other methods name them (an id in tenant ``default`` or
``tenant=``, or a :class:`~memstack.types.UserRef`), and only reads: a session changes through chat turns
(:meth:`AsyncMemstack.chat`, :meth:`~AsyncMemstack.ingest`) and ends with :meth:`~AsyncMemstack.end_session`.
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from typing import TYPE_CHECKING

from memstack.engine._scope import user_ref
from memstack.types import (
    ArchivedTurn,
    ArchiveHit,
    Artifact,
    BaseTruthSnapshot,
    HiddenKind,
    SessionState,
    SessionSummary,
    UserRef,
    check_id,
    check_text,
)

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["Sessions"]

#: Sessions read per page while looking for the current one (the first of the agent's decides).
_PAGE = 50


class Sessions:
    """A user's sessions, read back. ``NotFound`` for a session the user does not have (another user's included)."""

    def __init__(self, engine: AsyncMemstack) -> None:
        self._engine = engine

    async def list(
        self, user_id: str | UserRef, *, limit: int = 50, offset: int = 0, tenant: str | None = None
    ) -> builtins.list[SessionSummary]:
        """The user's sessions, most recently active first: turns, flagged turns, ended or not, and the one-line
        summary later sessions see (layer 7)."""
        user = user_ref(user_id, tenant)
        return await self._engine.store.archive.sessions(user, limit=limit, offset=offset)

    async def current(
        self, user_id: str | UserRef, *, agent: str | None = None, tenant: str | None = None
    ) -> SessionSummary | None:
        """The session a chat without ``session_id`` continues (:meth:`AsyncMemstack.chat`): the user's most recently
        active session that ``agent`` may use (its own, or one no agent has claimed yet; any session when ``agent``
        is omitted), unless that session has ended; ``None`` then, and for a user without sessions (a chat starts a
        new one). Ending a session (:meth:`AsyncMemstack.end_session`) is how a conversation is closed, so the next
        chat starts afresh."""
        user = user_ref(user_id, tenant)
        offset = 0
        while page := await self._engine.store.archive.sessions(user, limit=_PAGE, offset=offset):
            for summary in page:
                if agent is None or summary.agent in (None, agent):
                    return summary if summary.ended_at is None else None
            offset += len(page)
        return None

    async def get(
        self, user_id: str | UserRef, session_id: str, *, window_turns: int = 5, tenant: str | None = None
    ) -> SessionState:
        """One session's memory: base truth (hard exceptions marked), the whole turn log, and the raw messages of
        its last ``window_turns`` turns (a turn whose summary is still due included); never creates a session."""
        user = user_ref(user_id, tenant)
        check_id(session_id, "session_id")
        return await self._engine.store.sessions.open(user, session_id, create=False, window_turns=window_turns)

    async def turns(
        self,
        user_id: str | UserRef,
        session_id: str,
        *,
        limit: int = 100,
        offset: int = 0,
        include_hidden: bool = False,
        tenant: str | None = None,
    ) -> builtins.list[ArchivedTurn]:
        """The session's archived exchanges in turn order, each with its route, status and summaries (turn ``n``
        is at ``offset`` ``n - 1``: turns are numbered without gaps).

        The archive is the record: it holds the exchanges a forgotten memory hides too (a restore shows them
        again). They come with their texts withheld (messages and summaries empty, flag ``hidden``), in their
        place so that the numbering stays, unless ``include_hidden`` (the embedded library's only: an operator's
        view of the record, as the export is)."""
        user = user_ref(user_id, tenant)
        check_id(session_id, "session_id")
        store = self._engine.store
        turns = await store.archive.turns(user, session_id=session_id, limit=limit, offset=offset)
        if include_hidden or not turns:
            return turns
        hidden = {
            i.turn for i in await store.hidden.hidden(user) if i.kind is HiddenKind.TURN and i.session_id == session_id
        }
        return [_withheld(t) if t.turn in hidden else t for t in turns]

    async def snapshots(
        self, user_id: str | UserRef, session_id: str, *, limit: int = 20, tenant: str | None = None
    ) -> builtins.list[BaseTruthSnapshot]:
        """The session's latest base-truth snapshots (taken at consolidation), oldest first."""
        user = user_ref(user_id, tenant)
        check_id(session_id, "session_id")
        return await self._engine.store.archive.snapshots(user, session_id, limit=limit)

    async def artifacts(
        self, user_id: str | UserRef, session_id: str, *, turn: int | None = None, tenant: str | None = None
    ) -> builtins.list[Artifact]:
        """The code blocks and drafts of the session (of one ``turn``), in turn order."""
        user = user_ref(user_id, tenant)
        check_id(session_id, "session_id")
        return await self._engine.store.archive.artifacts(user, session_id, turn=turn)

    async def search(
        self,
        user_id: str | UserRef,
        query: str,
        *,
        limit: int = 5,
        session_id: str | None = None,
        tenant: str | None = None,
    ) -> builtins.list[ArchiveHit]:
        """The user's past exchanges holding words of ``query`` (full text, BM25, the same on every backend), best
        first; ``session_id``: only that session's. :meth:`AsyncMemstack.recall` ranks them with memories by
        meaning too."""
        user = user_ref(user_id, tenant)
        check_text(query, "the search query")
        if session_id is not None:
            check_id(session_id, "session_id")
        return await self._engine.store.archive.search(user, query, limit, session_id=session_id)


def _withheld(turn: ArchivedTurn) -> ArchivedTurn:
    """A hidden exchange as the doors show it: in its place, nothing of what was said."""
    flags = (*turn.flags, "hidden") if "hidden" not in turn.flags else turn.flags
    return replace(turn, user="", assistant="", user_summary="", assistant_summary="", error="", flags=flags)
