"""The session service: one chat turn's session memory, from the lock to the committed turn (DESIGN §1, seed 04).

::

    handle = await sessions.begin_turn(user, session_id, agent="tutor", temporary=False)  # waits for the lock
    ...                                   # phase 1: handle.state (base truth, turn log, raw window) → chat model
    await sessions.record_turn(handle, message, reply, at=now)  # durable before the reply is acknowledged
    background(sessions.finish_turn(handle))                                              # phase 2, then release
    # or, when phase 1 failed: await sessions.abort_turn(handle)

``record_turn`` archives the raw exchange flagged *pending* (durable: a crash from here on leaves the turn
flagged, and the turn exists); ``finish_turn`` (which records first when the caller did not) then summarizes under
the failure policy (:class:`~memstack.session.policy.SummaryRunner`), applies the
diff, consolidates on the configured cadence, extracts artifacts, snapshots base truth, and commits all of it with
the turn-log entry in one transaction before it releases the session lock. A raw-text fallback (timeout, endpoint
error, malformed answer) is committed *unsummarized* and summarized again in the background (bounded retries);
``resume_pending`` does the same at startup (and periodically, when several processes share the store) for every
flagged turn whose session nobody holds, a crash's pending ones included. The session's hold is a lease with a
fencing token (:mod:`memstack.store.leases`): the record and the commit carry it, and the store refuses them once
another process took the session over. A late summary never overrides what later turns established
(:mod:`memstack.session.late`).

Temporary sessions are kept in memory only (:class:`TemporarySessions`): nothing about them reaches the store.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memstack.errors import InputError, MemstackError, StoreBusy, StoreError, UserErased
from memstack.session.artifacts import extract_artifacts
from memstack.session.base import Summarizer
from memstack.session.consolidate import consolidate_base_truth, consolidation_due
from memstack.session.diff import FactGuard
from memstack.session.late import settle_late, split_at
from memstack.session.policy import Outcome, SummaryRunner, TurnResult, summarize_session
from memstack.session.routing import route_exchange
from memstack.session.settings import SessionSettings
from memstack.session.temporary import TemporarySessions
from memstack.session.window import evict, keep_extra
from memstack.store.base import HeldLock, Store
from memstack.store.fence import Fence, fenced
from memstack.store.leases import Lease
from memstack.types import (
    ArchivedTurn,
    BaseTruthSnapshot,
    Exchange,
    Fact,
    SessionState,
    SessionSummary,
    TurnCommit,
    TurnStatus,
    UserRef,
    new_id,
    utcnow,
)

__all__ = ["SessionService", "TurnHandle"]

log = logging.getLogger("memstack.session")

_RETRYABLE = (Outcome.FALLBACK_TIMEOUT, Outcome.FALLBACK_ERROR)
_RESUME_BATCH = 500
_RESUME_SESSIONS = 8  # sessions resumed at once


@dataclass(eq=False)
class TurnHandle:
    """One turn in progress: this turn's number, the session state phase 1 reads, and the session lock it holds.

    ``finish_turn`` or ``abort_turn`` ends it (once)."""

    user: UserRef
    session_id: str
    turn: int
    state: SessionState
    agent: str | None = None
    temporary: bool = False
    new_session: bool = False
    _held: HeldLock | None = field(default=None, repr=False)
    _done: bool = field(default=False, repr=False)
    _archived: ArchivedTurn | None = field(default=None, repr=False)

    @property
    def recorded(self) -> bool:
        """The raw exchange is archived (a temporary chat's: kept in memory)."""
        return self._archived is not None

    @property
    def lease(self) -> Lease | None:
        return self._held.lease if self._held is not None else None


@dataclass(frozen=True, slots=True)
class _Phase2:
    result: TurnResult
    commit: TurnCommit


class SessionService:
    """Session memory for the chat turn. ``store`` holds sessions (``store.sessions``, ``store.archive``);
    ``summarizer`` is the offline one or a model (:func:`~memstack.session.get_summarizer`); ``clock`` gives the
    time stamps (UTC). ``guard``: the write-time poisoning check of every base-truth entry a summarizer adds or
    updates (default: :func:`~memstack.guard.check_session_fact` with the phrase rules); a refused entry is
    not stored, and the turn is flagged ``refused`` with a warning naming it."""

    def __init__(
        self,
        store: Store,
        summarizer: Summarizer,
        settings: SessionSettings | None = None,
        clock: Callable[[], datetime] = utcnow,
        *,
        guard: FactGuard | None = None,
    ) -> None:
        self.store = store
        self.summarizer = summarizer
        self.settings = settings or SessionSettings()
        self._clock = clock
        self._runner = SummaryRunner(summarizer, self.settings, guard=guard)
        self._temporary = TemporarySessions(self.settings)
        self._active: set[asyncio.Task[object]] = set()  # tasks inside finish_turn
        self._background: set[asyncio.Task[object]] = set()  # retries and cross-session lines
        self._sleeping: set[asyncio.Task[object]] = set()  # retries still waiting for their time
        self._closing = False
        s = self.settings
        self._window_turns = math.ceil(s.window / 2) + s.long_extra_turns + 1

    # -- the turn ---------------------------------------------------------------------------------------------------

    async def begin_turn(
        self, user: UserRef | str, session_id: str | None = None, *, agent: str | None = None, temporary: bool = False
    ) -> TurnHandle:
        """Create the session if needed, wait for its lock (the previous turn's phase 2), read its state."""
        user = _user(user)
        if temporary:
            sid, state, held = await self._temporary.begin(user, session_id, agent)
            return TurnHandle(user, sid, state.turn_count + 1, state, agent, True, state.turn_count == 0, held)
        sid = session_id or new_id("ses")
        held = await self.store.sessions.acquire(user, sid, timeout=self.settings.lock_timeout_s)
        try:
            state = await self.store.sessions.open(
                user, sid, agent=agent, create=True, window_turns=self._window_turns, now=self._clock()
            )
        except BaseException:
            await held.release()
            raise
        state = replace(state, raw_window=evict(state.raw_window, self.settings.window))
        handle = TurnHandle(user, sid, state.turn_count + 1, state, state.agent, False, state.turn_count == 0, held)
        if handle.new_session and self.settings.refresh_lines:
            self._spawn(self._refresh_lines(user, exclude=sid))
        return handle

    async def abort_turn(self, handle: TurnHandle) -> None:
        """Phase 1 failed: release the lock; nothing of the turn is kept."""
        handle._done = True
        await self._release(handle)

    async def record_turn(
        self, handle: TurnHandle, user_message: str, assistant_reply: str, *, at: datetime | None = None
    ) -> None:
        """Archive the raw exchange flagged pending, under the turn's lease: once this returns, the turn exists and
        survives a crash (phase 2 resumes from it). The reply is acknowledged only after this. On failure the turn
        is not recorded (``LeaseLost`` when another process took the session over); the caller aborts it."""
        if handle._done or handle._archived is not None:
            raise InputError(f"turn {handle.turn} of session {handle.session_id!r} was already recorded or ended")
        when = at or self._clock()
        exchange = Exchange(handle.turn, user_message, assistant_reply, when)
        decision = route_exchange(exchange, self.settings)
        user = handle.user
        archived = ArchivedTurn(
            handle.session_id, exchange.turn, user_message, assistant_reply, when, TurnStatus.PENDING,
            user.user_id, user.tenant, decision.route.value, keep_extra(exchange, decision, self.settings),
        )  # fmt: skip
        if not handle.temporary:
            await self.store.sessions.record(user, archived, lease=handle.lease)
        handle._archived = archived

    async def finish_turn(
        self,
        handle: TurnHandle,
        user_message: str | None = None,
        assistant_reply: str | None = None,
        *,
        at: datetime | None = None,
    ) -> TurnResult:
        """Phase 2 of the turn, then release its lock. The raw exchange is durable before any summarizing starts:
        recorded here first unless :meth:`record_turn` did it (then the texts need not be given again)."""
        if handle._done:
            raise InputError(f"turn {handle.turn} of session {handle.session_id!r} was already finished or aborted")
        task = asyncio.current_task()
        if task is not None:
            self._active.add(task)
        recorded = committed = False
        try:
            if handle._archived is None:
                if user_message is None or assistant_reply is None:
                    raise InputError("finish_turn needs the exchange's texts when record_turn was not called")
                await self.record_turn(handle, user_message, assistant_reply, at=at)
            handle._done = True
            archived = handle._archived
            assert archived is not None
            if handle.temporary:
                return await self._temporary.finish(handle.user, handle.session_id, archived.exchange, self._runner)
            recorded = True
            phase2 = await self._phase2(handle.state, archived, prior_attempts=0)
            await self.store.sessions.commit(
                handle.user, handle.session_id, phase2.commit, now=self._clock(), lease=handle.lease
            )
            committed = True
            if phase2.commit.status is TurnStatus.UNSUMMARIZED:
                self._schedule_retry(handle.user, replace(archived, attempts=1))
            return phase2.result
        except StoreError:
            if recorded and not committed and handle._archived is not None:  # flagged in the store: try again later
                self._schedule_retry(handle.user, handle._archived)
            raise
        finally:
            handle._done = True
            if task is not None:
                self._active.discard(task)
            await self._release(handle)

    async def _release(self, handle: TurnHandle) -> None:
        held, handle._held = handle._held, None
        if held is not None:
            await held.release()

    # -- phase 2 ----------------------------------------------------------------------------------------------------

    async def _phase2(self, state: SessionState, turn: ArchivedTurn, *, prior_attempts: int) -> _Phase2:
        """Summarize one archived exchange against ``state`` (read under the session lock) and build its commit."""
        s = self.settings
        exchange = turn.exchange
        as_of, later = split_at(state.base_truth, exchange.turn)
        result = await self._runner.run(exchange, as_of)
        facts: tuple[Fact, ...] = result.base_truth
        flags = list(result.flags) + [f"warning: {w}" for w in result.warnings]
        if later:
            facts, superseded = settle_late(facts, later, exchange.turn, s)
            flags += ["late", *(f"warning: {w}" for w in superseded)]
        snapshots: list[BaseTruthSnapshot] = []
        consolidated = False
        if consolidation_due(exchange.turn, state.last_consolidated_turn, len(facts), s):
            merged = await consolidate_base_truth(self.summarizer, facts, s)
            snapshots.append(BaseTruthSnapshot(exchange.turn, "before consolidation", facts))
            facts, consolidated = merged.facts, True
            snapshots.append(BaseTruthSnapshot(exchange.turn, f"consolidated by {merged.consolidated_by}", facts))
            flags.append("consolidated")
            if merged.restored:
                flags.append(f"warning: consolidation dropped {len(merged.restored)} hard exception(s); restored")
        elif exchange.turn % s.snapshot_every == 0 and not later and prior_attempts == 0:
            snapshots.append(BaseTruthSnapshot(exchange.turn, "periodic", facts))
        attempts = prior_attempts + 1
        status = self._status(result.outcome, attempts)
        summary = replace(result.summary, unsummarized=status is TurnStatus.UNSUMMARIZED)
        if status is TurnStatus.FALLBACK and attempts > 1:
            flags.append(f"gave up after {attempts} attempts")
        commit = TurnCommit(
            turn=exchange.turn,
            status=status,
            summary=summary,
            base_truth=facts,
            expected_version=state.version,
            outcome=result.outcome.value,
            attempts=attempts,
            error=result.error,
            flags=tuple(dict.fromkeys(flags)),
            artifacts=tuple(extract_artifacts(exchange, s)),
            snapshots=tuple(snapshots),
            consolidated=consolidated,
        )
        return _Phase2(replace(result, summary=summary, base_truth=facts), commit)

    def _status(self, outcome: Outcome, attempts: int) -> TurnStatus:
        if outcome is Outcome.SUMMARIZED:
            return TurnStatus.SUMMARIZED
        retryable = outcome in _RETRYABLE or (outcome is Outcome.FALLBACK_MALFORMED and self.settings.retry_malformed)
        return TurnStatus.UNSUMMARIZED if retryable and attempts <= self.settings.max_retries else TurnStatus.FALLBACK

    # -- flagged turns: background retries and the startup scan -----------------------------------------------------

    async def resume_pending(self) -> int:
        """Summarize every flagged turn in the store (interrupted or unsummarized), each under its session's lock
        and in turn order; returns how many were summarized again. A session held right now (a turn in phase 2 here
        or in another live process) is skipped: its holder finishes it, or a later scan takes it once the holder's
        lease lapsed. Safe to run in several processes at once."""
        done = 0
        seen: set[tuple[str, str, str, int]] = set()
        while True:  # turns still flagged after their try come back in the next batch: skip those, take the rest
            rows = await self.store.sessions.pending(limit=len(seen) + _RESUME_BATCH)
            batch = [t for t in rows if _key(t) not in seen]
            if not batch:
                return done
            seen.update(_key(t) for t in batch)
            by_session: dict[tuple[str, str, str], list[ArchivedTurn]] = {}
            for t in batch:
                by_session.setdefault(_key(t)[:3], []).append(t)
            gate = asyncio.Semaphore(_RESUME_SESSIONS)
            results = await asyncio.gather(*(self._resume_session(turns, gate) for turns in by_session.values()))
            done += sum(results)

    async def _resume_session(self, turns: Sequence[ArchivedTurn], gate: asyncio.Semaphore) -> int:
        async with gate:
            return await self._resume_turns(turns)

    async def _resume_turns(self, turns: Sequence[ArchivedTurn]) -> int:
        """One session's flagged turns, in order, under an erasure fence pinned now (they were read before it): the
        session must still be there after the pin, or the user was erased meanwhile and there is nothing to do."""
        first = turns[0]
        user = UserRef(first.user_id, first.tenant)
        with fenced(Fence(user, await self.store.users.epoch(user))):
            if not await self.store.archive.sessions(user, session_id=first.session_id):
                return 0
            return await self._resummarize_all(user, turns)

    async def _resummarize_all(self, user: UserRef, turns: Sequence[ArchivedTurn]) -> int:
        done = 0
        for t in sorted(turns, key=lambda t: t.turn):
            try:
                done += await self._resummarize(user, t, wait=False)
            except StoreBusy:  # held: its holder finishes it, or the next scan takes it
                log.debug("session %s is held; turn %d is left to its holder or the next scan", t.session_id, t.turn)
                return done
            except UserErased:  # the user was erased since the pin: the turns went with them
                return done
            except MemstackError as exc:  # stays flagged: the next start tries again
                log.warning("session %s turn %d could not be summarized again: %s", t.session_id, t.turn, exc)
        return done

    async def _resummarize(self, user: UserRef, turn: ArchivedTurn, *, wait: bool = True) -> bool:
        """Summarize a flagged turn again under the session lock, unless someone already did; ``True`` if it ran.
        ``wait=False``: ``StoreBusy`` at once when the session is held."""
        timeout = self.settings.lock_timeout_s if wait else 0
        held = await self.store.sessions.acquire(user, turn.session_id, timeout=timeout)
        try:
            state = await self.store.sessions.open(user, turn.session_id, create=False, window_turns=1)
            if turn.turn not in state.flagged_turns:
                return False
            # Its attempts as they stand now (another process may have tried meanwhile); turns are numbered 1, 2, …
            fresh = await self.store.archive.turns(user, session_id=turn.session_id, limit=1, offset=turn.turn - 1)
            turn = fresh[0] if fresh and fresh[0].turn == turn.turn else turn
            phase2 = await self._phase2(state, turn, prior_attempts=turn.attempts)
            await self.store.sessions.commit(user, turn.session_id, phase2.commit, now=self._clock(), lease=held.lease)
        finally:
            await held.release()
        log.info("session %s turn %d summarized again: %s", turn.session_id, turn.turn, phase2.commit.status.value)
        if phase2.commit.status is TurnStatus.UNSUMMARIZED:
            self._schedule_retry(user, replace(turn, attempts=phase2.commit.attempts))
        return True

    def _schedule_retry(self, user: UserRef, turn: ArchivedTurn) -> None:
        if self._closing:
            return  # flagged in the store: the next start's resume_pending takes it
        delay = self.settings.retry_after_s * 2 ** max(turn.attempts - 1, 0)
        self._spawn(self._retry_later(user, turn, delay), sleeping=True)

    async def _retry_later(self, user: UserRef, turn: ArchivedTurn, delay: float) -> None:
        await asyncio.sleep(delay)
        task = asyncio.current_task()
        if task is not None:
            self._sleeping.discard(task)  # from here on, drain waits for it rather than cancelling it
        await self._resummarize(user, turn)

    # -- cross-session lines (layer 7) ------------------------------------------------------------------------------

    async def recent_summaries(
        self, user: UserRef | str, limit: int = 5, *, exclude: str | None = None
    ) -> list[SessionSummary]:
        """Lines about the user's most recent past sessions, newest first (``exclude``: the current session)."""
        user = _user(user)
        rows = await self.store.archive.sessions(user, limit=limit + (1 if exclude else 0), with_line=True)
        return [r for r in rows if r.session_id != exclude][:limit]

    async def end_session(self, user: UserRef | str, session_id: str) -> SessionSummary | None:
        """Close a session and write its cross-session line; ``None`` for a temporary session or one without turns
        (closed all the same)."""
        user = _user(user)
        if self._temporary.end(user, session_id):
            return None
        held = await self.store.sessions.acquire(user, session_id, timeout=self.settings.lock_timeout_s)
        try:  # the lock: the last turn's phase 2 belongs in the line
            state = await self.store.sessions.open(user, session_id, create=False, window_turns=1)
        finally:
            await held.release()
        if not state.turn_log:
            await self.store.sessions.end(user, session_id, "", through_turn=0, ended=True, now=self._clock())
            return None
        line = await summarize_session(self.summarizer, state.turn_log, state.base_truth, self.settings)
        return await self.store.sessions.end(
            user, session_id, line, through_turn=state.turn_count, ended=True, now=self._clock()
        )

    async def _refresh_lines(self, user: UserRef, *, exclude: str) -> None:
        """A new session started: give the user's recent sessions whose line is missing or stale an up-to-date one."""
        recent = await self.store.archive.sessions(user, limit=self.settings.refresh_lines + 1)
        for row in recent:
            if row.session_id == exclude or row.turn_count <= row.line_turn:
                continue
            state = await self.store.sessions.open(user, row.session_id, create=False, window_turns=1)
            if not state.turn_log:
                continue
            line = await summarize_session(self.summarizer, state.turn_log, state.base_truth, self.settings)
            await self.store.sessions.end(
                user, row.session_id, line, through_turn=state.turn_count, ended=False, now=self._clock()
            )

    # -- background work --------------------------------------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, object], *, sleeping: bool = False) -> None:
        task = asyncio.create_task(self._guard(work))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        if sleeping:
            self._sleeping.add(task)
            task.add_done_callback(self._sleeping.discard)

    @staticmethod
    async def _guard(work: Coroutine[Any, Any, object]) -> object:
        """Background work logs its failures; what it was doing stays flagged in the store for the next try."""
        try:
            return await work
        except UserErased as exc:  # nothing of it is kept, as it should be
            log.info("session background work stopped: %s", exc)
        except MemstackError as exc:
            log.warning("session background work failed: %s", exc)
        except Exception:
            log.exception("session background work failed unexpectedly")
        return None

    async def drain(self, timeout_s: float = 30.0) -> None:
        """Graceful shutdown: stop scheduling retries, cancel those still waiting (they stay flagged for the next
        start), and wait up to ``timeout_s`` for turns in phase 2 and work already running; then cancel the rest."""
        self._closing = True
        for task in list(self._sleeping):
            task.cancel()
        waiting = {t for t in (*self._active, *self._background) if t is not asyncio.current_task()}
        if not waiting:
            return
        _, late = await asyncio.wait(waiting, timeout=timeout_s)
        for task in late:
            task.cancel()
        if late:
            log.warning("drain: %d session task(s) still running after %gs were cancelled", len(late), timeout_s)
            await asyncio.wait(late)

    @property
    def busy(self) -> int:
        """Turns in phase 2 plus background tasks (retries, lines) right now."""
        return len(self._active) + len(self._background)


def _user(user: UserRef | str) -> UserRef:
    return user if isinstance(user, UserRef) else UserRef(user)


def _key(turn: ArchivedTurn) -> tuple[str, str, str, int]:
    return (turn.tenant, turn.user_id, turn.session_id, turn.turn)
