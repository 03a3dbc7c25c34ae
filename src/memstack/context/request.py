"""A :class:`ContextRequest` from a JSON object (``memstack context render --request FILE``).

Shape (every field but ``message`` optional; unknown fields are ignored and reported as notes)::

    {"agent": {...same fields as the agent YAML; "core" and "characteristics" may each be one plain string...},
     "session": {"timezone", "local_time", "user_agent", "location", "tier", "coins", "tenant", "flags"},
     "delegated": {"instructions", "payload", "output_schema"} | null,
     "facts": [{"text", "hard_exception"}], "memories": [{"id", "content", "category", "score"}],
     "summaries": [{"id", "text", "at"}], "turn_log": [{"turn", "user_summary", "assistant_summary"}],
     "thread": [{"role": "user|assistant|tool", "content"}], "message": "...", "budget_tokens": N, "model": "...",
     "memory": true, "temporary": false}

Items that cannot be used (a fact without text, a memory that is not an object) are skipped with a note; values of
the wrong type where a whole request would be meaningless (``message``, ``budget_tokens``) raise ``InputError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memstack.context.agent import agent_from_request
from memstack.context.assemble import ContextRequest, DelegatedTask, MemoryHit, SummaryLine
from memstack.context.session_meta import build_session
from memstack.errors import InputError
from memstack.types import Fact, RawMessage, TurnSummary

__all__ = ["request_from_json"]

_TOP = (
    "agent",
    "session",
    "delegated",
    "facts",
    "memories",
    "summaries",
    "turn_log",
    "thread",
    "message",
    "budget_tokens",
    "model",
    "memory",
    "temporary",
    "context_id",
)


def request_from_json(data: Any, *, now: datetime | None = None) -> tuple[ContextRequest, tuple[str, ...]]:
    """The request and the notes about what was ignored or fell back."""
    if not isinstance(data, Mapping):
        raise InputError('the request must be a JSON object with at least a "message"')
    notes = [f"ignored field {key!r}" for key in data if key not in _TOP]
    message = data.get("message")
    if not isinstance(message, str) or not message.strip():
        raise InputError('the request needs "message": the user\'s current message as text')
    agent, ignored = agent_from_request(data.get("agent"))
    notes.extend(f"ignored field {name!r}" for name in ignored)
    session_raw = data.get("session")
    raw = session_raw if isinstance(session_raw, Mapping) else None
    tenant = raw.get("tenant") if raw is not None else None  # the request file speaks for its author, as a key would
    session = build_session(raw, now=now, tenant=tenant if isinstance(tenant, str) and tenant.strip() else None)
    if session_raw is not None and not isinstance(session_raw, Mapping):
        notes.append("session is not an object; using defaults")
    request = ContextRequest(
        message=message,
        agent=agent,
        session=session,
        delegated=_delegated(data.get("delegated"), notes),
        facts=tuple(_items(data, "facts", _fact, notes)),
        memories=tuple(_items(data, "memories", _memory, notes)),
        summaries=tuple(_items(data, "summaries", _summary, notes)),
        turn_log=tuple(_items(data, "turn_log", _turn, notes)),
        thread=tuple(_items(data, "thread", _message, notes)),
        budget_tokens=_budget(data.get("budget_tokens")),
        model=_text(data.get("model")) or None,
        memory_enabled=_flag(data.get("memory"), True, "memory", notes),
        temporary=_flag(data.get("temporary"), False, "temporary", notes),
        context_id=_text(data.get("context_id")) or None,
    )
    return request, tuple(notes)


def _text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, str | int | float):
        return str(value).strip()
    return ""


def _flag(value: Any, default: bool, name: str, notes: list[str]) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    notes.append(f"{name} is not true/false; using {str(default).lower()}")
    return default


def _budget(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < 1:
        raise InputError(f'"budget_tokens" must be a whole number of tokens (1 or more), got {value!r}')
    return int(value)


def _items(data: Mapping[str, Any], key: str, build: Any, notes: list[str]) -> list[Any]:
    raw = data.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        notes.append(f"{key} is not a list; ignored")
        return []
    out = []
    for i, item in enumerate(raw):
        value = build(item, i)
        if value is None:
            notes.append(f"{key}[{i}] skipped: not usable")
        else:
            out.append(value)
    return out


def _number(value: Any, default: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _fact(item: Any, i: int) -> Fact | None:
    if isinstance(item, str):
        return Fact(item) if item.strip() else None
    if not isinstance(item, Mapping) or not _text(item.get("text")):
        return None
    since = item.get("since_turn")
    return Fact(
        _text(item.get("text")),
        hard_exception=item.get("hard_exception") is True,
        since_turn=int(since) if isinstance(since, int) and not isinstance(since, bool) else 0,
    )


def _memory(item: Any, i: int) -> MemoryHit | None:
    if isinstance(item, str):
        return MemoryHit(f"m{i}", item) if item.strip() else None
    if not isinstance(item, Mapping) or not _text(item.get("content")):
        return None
    category = _text(item.get("category"))[:40] or None
    return MemoryHit(_text(item.get("id")) or f"m{i}", _text(item.get("content")), category, _number(item.get("score")))


def _summary(item: Any, i: int) -> SummaryLine | None:
    if isinstance(item, str):
        return SummaryLine(f"s{i}", item) if item.strip() else None
    if not isinstance(item, Mapping) or not _text(item.get("text")):
        return None
    at = None
    if isinstance(item.get("at"), str):
        try:
            at = datetime.fromisoformat(item["at"].strip())
        except ValueError:
            at = None
    return SummaryLine(_text(item.get("id")) or f"s{i}", _text(item.get("text")), at)


def _turn(item: Any, i: int) -> TurnSummary | None:
    if not isinstance(item, Mapping):
        return None
    user, you = _text(item.get("user_summary")), _text(item.get("assistant_summary"))
    if not user and not you:
        return None
    turn = item.get("turn")
    number = int(turn) if isinstance(turn, int | float) and not isinstance(turn, bool) else i + 1
    return TurnSummary(number, user, you, unsummarized=item.get("unsummarized") is True)


def _message(item: Any, i: int) -> RawMessage | None:
    if not isinstance(item, Mapping):
        return None
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        return None
    role = _text(item.get("role")).lower() or "user"
    return RawMessage(role=role[:20], content=content, turn=i)


def _delegated(value: Any, notes: list[str]) -> DelegatedTask | None:
    if value is None:
        return None
    if isinstance(value, str):
        return DelegatedTask(value) if value.strip() else None
    if not isinstance(value, Mapping):
        notes.append("delegated is not an object; ignored")
        return None
    instructions = value.get("instructions")
    task = DelegatedTask(
        instructions=instructions.strip() if isinstance(instructions, str) else "",
        payload=value.get("payload"),
        output_schema=value.get("output_schema"),
        parent=_text(value.get("parent")) or None,
    )
    if not task.instructions and task.payload is None and task.output_schema is None:
        return None
    return task
