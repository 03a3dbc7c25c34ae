"""What both backends' session stores share: argument checks, base truth as JSON, domain values from rows (the
state of a session, archived turns, summaries, artifacts, snapshots), the errors of a conflicting write.

Base truth is stored as one JSON document per session (``[{"text", "hard", "since"}, …]``): it is small (tens of
facts), always read and written whole, and a commit replaces it in the same transaction as the turn it came from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from memstack.errors import InputError, SessionConflict
from memstack.types import (
    ArchivedTurn,
    Artifact,
    BaseTruthSnapshot,
    Fact,
    RawMessage,
    SessionState,
    SessionSummary,
    TurnStatus,
    TurnSummary,
    UserRef,
)

__all__ = [
    "FLAGGED",
    "SESSION_COLUMNS",
    "TURN_COLUMNS",
    "artifact_from_row",
    "check_page",
    "check_same_agent",
    "check_session_agent",
    "check_session_id",
    "check_turn",
    "facts_from_json",
    "facts_to_data",
    "facts_to_json",
    "log_entry",
    "needs_write",
    "raw_messages",
    "snapshot_from_row",
    "state_from_row",
    "summary_from_row",
    "turn_from_row",
    "turn_summary",
    "turn_taken",
    "version_moved",
]

#: Statuses of turns whose summary is still due.
FLAGGED = (TurnStatus.PENDING.value, TurnStatus.UNSUMMARIZED.value)

#: Columns of ``sessions`` that follow its key in the session row both backends read (``state_from_row``).
SESSION_COLUMNS = "agent, turn_count, version, base_truth, last_consolidated_turn, created_at, updated_at, ended_at"

#: Columns of ``session_turns t`` joined to ``sessions s`` that make an :class:`ArchivedTurn` (``turn_from_row``).
TURN_COLUMNS = (
    "s.id, t.turn, t.user_text, t.assistant_text, t.at, t.status, t.user_id, t.tenant, t.route, t.user_keep, "
    "t.assistant_keep, t.user_summary, t.assistant_summary, t.outcome, t.attempts, t.error, t.flags"
)

_MAX_TEXT = 1_000_000  # one message of a chat; longer text is a document, not a turn


def check_session_id(session_id: str) -> str:
    if not isinstance(session_id, str) or not session_id or len(session_id) > 200 or not session_id.isprintable():
        raise InputError(f"session_id must be 1-200 printable characters, got {session_id!r}")
    return session_id


def check_session_agent(agent: str | None) -> None:
    if agent is not None and (not agent or len(agent) > 200 or not agent.isprintable()):
        raise InputError(f"agent must be 1-200 printable characters or None, got {agent!r}")


def check_page(limit: int, offset: int = 0) -> None:
    if limit < 1 or offset < 0:
        raise InputError(f"limit must be at least 1 and offset at least 0, got {limit} and {offset}")


def check_turn(turn: ArchivedTurn) -> None:
    check_session_id(turn.session_id)
    if turn.turn < 1:
        raise InputError(f"turn numbers start at 1, got {turn.turn}")
    for name in ("user", "assistant"):
        text = getattr(turn, name)
        if not isinstance(text, str):
            raise InputError(f"the {name} message must be text, got {type(text).__name__}")
        if len(text) > _MAX_TEXT:
            raise InputError(f"the {name} message has {len(text)} characters; the limit is {_MAX_TEXT}")


def needs_write(row: Sequence[Any], agent: str | None) -> bool:
    """Whether opening the session of ``row`` (its key, then ``SESSION_COLUMNS``) for a turn of ``agent`` writes: it
    must be resumed or learn its agent, or the agent differs (``check_same_agent`` refuses that)."""
    stored_agent, ended = row[1], row[8]
    return ended is not None or (agent is not None and stored_agent != agent)


def check_same_agent(session_id: str, row: Sequence[Any], agent: str | None) -> None:
    stored_agent = row[1]
    if agent is not None and stored_agent is not None and stored_agent != agent:
        raise InputError(
            f"session {session_id!r} belongs to agent {stored_agent!r}, not {agent!r}; "
            "start a new session for this agent"
        )


def turn_taken(session_id: str, turn_count: int, turn: int) -> SessionConflict:
    """The error of ``record`` when the session is not at the turn before ``turn``."""
    return SessionConflict(
        f"session {session_id!r} is at turn {turn_count}, so turn {turn} cannot be recorded: "
        "another process wrote to this session meanwhile; open the session again and retry the turn"
    )


def version_moved(session_id: str, turn: int, version: int, expected: int) -> SessionConflict:
    """The error of ``commit`` when the session's version is not the one the commit was built on."""
    return SessionConflict(
        f"session {session_id!r} changed while turn {turn} was summarized (version {version}, "
        f"expected {expected}); the turn stays flagged and is summarized again"
    )


def facts_to_data(facts: Iterable[Fact]) -> list[dict[str, Any]]:
    return [{"text": f.text, "hard": f.hard_exception, "since": f.since_turn} for f in facts]


def facts_to_json(facts: Iterable[Fact]) -> str:
    return json.dumps(facts_to_data(facts))


def facts_from_json(value: str | list[Any] | None) -> tuple[Fact, ...]:
    data = json.loads(value) if isinstance(value, str) else (value or [])
    return tuple(Fact(str(d["text"]), bool(d.get("hard", False)), int(d.get("since", 0))) for d in data)


def turn_summary(turn: ArchivedTurn) -> TurnSummary | None:
    """The turn-log entry of an archived turn, or ``None`` while it has none (pending)."""
    if turn.status is TurnStatus.PENDING and not turn.user_summary and not turn.assistant_summary:
        return None
    return TurnSummary(
        turn.turn, turn.user_summary, turn.assistant_summary, unsummarized=turn.status is TurnStatus.UNSUMMARIZED
    )


def log_entry(turn: int, user_summary: str, assistant_summary: str, status: str) -> TurnSummary:
    """The turn-log entry of a turn that is not pending, from its row."""
    return TurnSummary(int(turn), user_summary, assistant_summary, unsummarized=status == TurnStatus.UNSUMMARIZED.value)


def raw_messages(turns: Sequence[ArchivedTurn]) -> tuple[RawMessage, ...]:
    """Both messages of each turn, in turn order: the raw window before eviction. A blank message is left out: it
    was not said (an imported reply with no message before it; a turn the offline responder answered, whose report
    is not kept as a reply)."""
    out: list[RawMessage] = []
    for t in sorted(turns, key=lambda t: t.turn):
        if t.user.strip():
            out.append(RawMessage("user", t.user, t.turn, t.at, t.keep_extra[0]))
        if t.assistant.strip():
            out.append(RawMessage("assistant", t.assistant, t.turn, t.at, t.keep_extra[1]))
    return tuple(out)


def turn_from_row(
    row: Sequence[Any], *, when: Callable[[Any], datetime], flags: Callable[[Any], Iterable[str]]
) -> ArchivedTurn:
    """An :class:`ArchivedTurn` from the ``TURN_COLUMNS`` of one row; ``when`` and ``flags`` read the backend's
    time stamp and flag list."""
    sid, turn, user, assistant, at, status, user_id, tenant, route, ukeep, akeep, us, asum, outcome = row[:14]
    attempts, error, flag_list = row[14:]
    return ArchivedTurn(
        session_id=sid,
        turn=int(turn),
        user=user,
        assistant=assistant,
        at=when(at),
        status=TurnStatus(status),
        user_id=user_id,
        tenant=tenant,
        route=route,
        keep_extra=(int(ukeep), int(akeep)),
        user_summary=us,
        assistant_summary=asum,
        outcome=outcome,
        attempts=int(attempts),
        error=error,
        flags=tuple(flags(flag_list)),
    )


def summary_from_row(row: Sequence[Any], *, when: Callable[[Any], datetime | None]) -> SessionSummary:
    """A :class:`SessionSummary` from ``id, user_id, tenant, agent, turn_count, line, line_turn, flagged,
    created_at, updated_at, ended_at``."""
    sid, user_id, tenant, agent, turns, line, line_turn, flagged, created, updated, ended = row
    return SessionSummary(
        sid, user_id, tenant, agent, int(turns), line, int(line_turn), int(flagged),
        when(created), when(updated), when(ended),
    )  # fmt: skip


def state_from_row(
    user: UserRef,
    session_id: str,
    row: Sequence[Any],
    *,
    log: Iterable[TurnSummary],
    recent: Sequence[ArchivedTurn],
    flagged: Iterable[int],
    when: Callable[[Any], datetime | None],
) -> SessionState:
    """A :class:`SessionState` from the session row (its key, then ``SESSION_COLUMNS``), the turn log, the recent
    turns of the raw window and the flagged turn numbers; ``when`` reads the backend's time stamp."""
    _, agent, turn_count, version, base_truth, last_consolidated, created, updated, ended = row
    return SessionState(
        session_id=session_id,
        user_id=user.user_id,
        tenant=user.tenant,
        agent=agent,
        turn_count=int(turn_count),
        base_truth=facts_from_json(base_truth),
        turn_log=tuple(log),
        raw_window=raw_messages(recent),
        created_at=when(created),
        updated_at=when(updated),
        ended_at=when(ended),
        version=int(version),
        last_consolidated_turn=int(last_consolidated),
        flagged_turns=tuple(flagged),
    )


def artifact_from_row(row: Sequence[Any], session_id: str, *, when: Callable[[Any], datetime | None]) -> Artifact:
    """An :class:`Artifact` from ``turn, kind, content, role, language, label, idx, created_at``."""
    turn, kind, content, role, language, label, idx, created = row
    return Artifact(int(turn), kind, content, role, language, label, int(idx), session_id, when(created))


def snapshot_from_row(
    row: Sequence[Any], session_id: str, *, when: Callable[[Any], datetime | None]
) -> BaseTruthSnapshot:
    """A :class:`BaseTruthSnapshot` from ``turn, reason, facts, at``."""
    turn, reason, facts, at = row
    return BaseTruthSnapshot(int(turn), reason, facts_from_json(facts), session_id, when(at))
