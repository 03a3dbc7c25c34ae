"""What both backends' session stores share: argument checks, base truth as JSON, the raw window from archive rows.

Base truth is stored as one JSON document per session (``[{"text", "hard", "since"}, …]``): it is small (tens of
facts), always read and written whole, and a commit replaces it in the same transaction as the turn it came from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from memstack.errors import InputError
from memstack.types import ArchivedTurn, Fact, RawMessage, SessionSummary, TurnStatus, TurnSummary

__all__ = [
    "FLAGGED",
    "TURN_COLUMNS",
    "check_page",
    "check_session_id",
    "check_turn",
    "facts_from_json",
    "facts_to_data",
    "facts_to_json",
    "raw_messages",
    "summary_from_row",
    "turn_from_row",
    "turn_summary",
]

#: Statuses of turns whose summary is still due.
FLAGGED = (TurnStatus.PENDING.value, TurnStatus.UNSUMMARIZED.value)

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
