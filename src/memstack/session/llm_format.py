"""What the model-backed summarizer sends and how it reads the answers: rendering and strict parsing.

Parsing is strict about shape (a wrong shape raises :class:`~memstack.errors.MalformedResponse`, which the
failure policy retries once) and lenient about what does not matter (a missing ``flags`` or ``hard_exceptions``,
``null`` arrays, a diff given at the top level).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from memstack.errors import MalformedResponse
from memstack.prompts import (
    SESSION_CONSOLIDATE,
    SESSION_CROSS_SESSION,
    SESSION_TURN_SYSTEM,
    SESSION_TURN_USER,
)
from memstack.session.base import TurnDraft
from memstack.session.settings import SessionSettings
from memstack.types import BaseTruthDiff, Exchange, Fact, Route, TurnSummary

__all__ = [
    "consolidate_prompt",
    "parse_facts",
    "parse_line",
    "parse_turn",
    "session_prompt",
    "turn_prompts",
]

_DEPTH = {
    Route.SHORT: "summaries only; this exchange is short, leave every base_truth_diff array empty.",
    Route.MEDIUM: "summaries and base_truth_diff.",
    Route.LONG: "summaries and base_truth_diff. The messages are long: read their beginnings with care.",
    Route.CODE: "summaries and base_truth_diff. The exchange is code-heavy: record the function signatures, types "
    "and patterns it establishes.",
}
_TAG = re.compile(r"<(/?)(user_message|assistant_reply)\b", re.I)
_MAX_MESSAGE_CHARS = 24_000


def _quote(text: str) -> str:
    """Message text inside its delimiters: tags that could close the block early are defused; huge texts cut."""
    text = _TAG.sub(lambda m: f"‹{m.group(1)}{m.group(2)}", text)
    if len(text) > _MAX_MESSAGE_CHARS:
        half = _MAX_MESSAGE_CHARS // 2
        text = f"{text[:half]}\n[… {len(text) - _MAX_MESSAGE_CHARS} characters omitted …]\n{text[-half:]}"
    return text


def _facts_block(base_truth: Sequence[Fact], *, marks: bool = False) -> str:
    if not base_truth:
        return "(none yet)"
    lines = []
    for f in base_truth:
        prefix = (
            f"[hard] turn {f.since_turn}: "
            if marks and f.hard_exception
            else (f"turn {f.since_turn}: " if marks else "")
        )
        lines.append(f"- {prefix}{f.text}")
    return "\n".join(lines)


def turn_prompts(
    exchange: Exchange, base_truth: Sequence[Fact], route: Route, settings: SessionSettings
) -> tuple[str, str]:
    """``(system, user)`` message texts for summarizing one exchange."""
    system = SESSION_TURN_SYSTEM.render(
        user_words=str(settings.user_summary_words), assistant_words=str(settings.assistant_summary_words)
    )
    user = SESSION_TURN_USER.render(
        turn=str(exchange.turn),
        depth=_DEPTH[route],
        base_truth=_facts_block(base_truth),
        user_message=_quote(exchange.user),
        assistant_reply=_quote(exchange.assistant),
    )
    return system, user


def consolidate_prompt(base_truth: Sequence[Fact]) -> str:
    return SESSION_CONSOLIDATE.render(facts=_facts_block(base_truth, marks=True))


def session_prompt(turn_log: Sequence[TurnSummary], base_truth: Sequence[Fact], words: int) -> str:
    turns = "\n".join(f"Turn {t.turn}: User: {t.user_summary} | Assistant: {t.assistant_summary}" for t in turn_log)
    return SESSION_CROSS_SESSION.render(words=str(words), turns=turns or "(none)", facts=_facts_block(base_truth))


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise MalformedResponse(f"summarizer JSON has no string {key!r} (got {type(value).__name__})", body=str(data))
    return value.strip()


def _strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MalformedResponse(f"summarizer JSON field {key!r} must be a list of strings", body=str(data))
    return tuple(v.strip() for v in value if v.strip())


def parse_turn(data: Mapping[str, Any]) -> TurnDraft:
    diff_data = data.get("base_truth_diff")
    if diff_data is None:
        diff_data = {k: data[k] for k in ("add", "update", "remove") if k in data}
    if not isinstance(diff_data, Mapping):
        raise MalformedResponse("summarizer JSON field 'base_truth_diff' must be an object", body=str(data))
    diff = BaseTruthDiff(
        add=_strings(diff_data, "add"),
        update=_strings(diff_data, "update"),
        remove=_strings(diff_data, "remove"),
        hard=_strings(data, "hard_exceptions") or _strings(diff_data, "hard_exceptions"),
    )
    return TurnDraft(_text(data, "user_summary"), _text(data, "assistant_summary"), diff, _strings(data, "flags"))


def parse_facts(data: Mapping[str, Any]) -> list[Fact]:
    items = data.get("facts")
    if not isinstance(items, list):
        raise MalformedResponse("consolidation JSON has no 'facts' list", body=str(data))
    facts = []
    for item in items:
        if isinstance(item, str):
            facts.append(Fact(item.strip()))
        elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
            facts.append(Fact(item["text"].strip(), bool(item.get("hard", False))))
        else:
            raise MalformedResponse("each consolidated fact must be a string or {'text': …, 'hard': …}", body=str(data))
    return [f for f in facts if f.text]


def parse_line(data: Mapping[str, Any]) -> str:
    return _text(data, "line")
