"""Temporary sessions (DESIGN §2, "temporary chat"): the same session memory, held in this process only.

A temporary chat still needs its own short-term memory between its turns (base truth, turn log, raw window), but
nothing about it may reach the store: no archive, no artifacts, no snapshots, no cross-session line. Sessions live
in a bounded LRU (``SessionSettings.temporary_sessions``) and go when ended or evicted; a restart forgets them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from memstack.session.consolidate import consolidate_base_truth, consolidation_due
from memstack.session.lock import LocalSessionLocks
from memstack.session.policy import SummaryRunner, TurnResult
from memstack.session.routing import route_exchange
from memstack.session.settings import SessionSettings
from memstack.session.window import push_exchange
from memstack.store.base import HeldLock
from memstack.types import Exchange, SessionState, UserRef, new_id, utcnow

__all__ = ["TemporarySessions"]


class TemporarySessions:
    """In-memory session states keyed by ``(tenant, user, session id)``, with their own per-session locks."""

    def __init__(self, settings: SessionSettings) -> None:
        self.settings = settings
        self._states: OrderedDict[tuple[str, str, str], SessionState] = OrderedDict()
        self._locks = LocalSessionLocks()

    def __len__(self) -> int:
        return len(self._states)

    async def begin(
        self, user: UserRef, session_id: str | None, agent: str | None
    ) -> tuple[str, SessionState, HeldLock]:
        sid = session_id or new_id("tmp")
        held = await self._locks.acquire(sid, timeout=self.settings.lock_timeout_s, scope=_scope(user))
        key = (user.tenant, user.user_id, sid)
        state = self._states.get(key)
        if state is None:
            now = utcnow()
            state = SessionState(sid, user.user_id, user.tenant, agent, 0, created_at=now, updated_at=now)
            self._remember(key, state)
        else:
            self._states.move_to_end(key)
        return sid, state, held

    async def finish(self, user: UserRef, session_id: str, exchange: Exchange, runner: SummaryRunner) -> TurnResult:
        """Phase 2 in memory: summarize, apply the diff, consolidate on cadence, turn log, raw window."""
        s = self.settings
        key = (user.tenant, user.user_id, session_id)
        state = self._states.get(key) or SessionState(session_id, user.user_id, user.tenant, None, 0)
        result = await runner.run(exchange, state.base_truth)
        facts = result.base_truth
        consolidated = state.last_consolidated_turn
        if consolidation_due(exchange.turn, consolidated, len(facts), s):
            facts = (await consolidate_base_truth(runner.summarizer, facts, s)).facts
            consolidated = exchange.turn
        window = push_exchange(state.raw_window, exchange, route_exchange(exchange, s), s)
        self._remember(
            key,
            replace(
                state,
                turn_count=exchange.turn,
                base_truth=facts,
                turn_log=(*state.turn_log, result.summary),
                raw_window=window,
                updated_at=exchange.at,
                last_consolidated_turn=consolidated,
            ),
        )
        return replace(result, base_truth=facts)

    def end(self, user: UserRef, session_id: str) -> bool:
        """Forget a temporary session; ``False`` if there is none by that id."""
        return self._states.pop((user.tenant, user.user_id, session_id), None) is not None

    def _remember(self, key: tuple[str, str, str], state: SessionState) -> None:
        self._states[key] = state
        self._states.move_to_end(key)
        while len(self._states) > self.settings.temporary_sessions:
            self._states.popitem(last=False)


def _scope(user: UserRef) -> str:
    return f"{user.tenant}\x1f{user.user_id}"
