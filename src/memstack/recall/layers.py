"""Recalled items as the memory layer (layer 6) shows them.

Memories are shown as they are. Archived messages are shown in the same block as excerpts of past conversations:
each recalled message with the message before it (so a reply like "yes, the one near Boston" keeps its question),
overlapping excerpts of one conversation merged, under the label ``past conversation, DATE``; each message is
clipped to ``clip_chars`` characters (an excerpt, not a transcript). An excerpt's score is its best message's, so
the layer's trim rule (lowest score first, the best ``keep_top`` never) treats excerpts and memories alike.

Their ids start with ``turn:`` (``turn:SESSION:TURN:ROLE`` of the excerpt's first message), which is how the
manifest, ``memories_used`` and the inspector tell them from memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstack.context import MemoryHit
from memstack.dates import when_held
from memstack.types import RecallItem, RecallKind, utcnow

__all__ = ["EXCERPT_PREFIX", "layer_hits"]

#: Id prefix of excerpts of past conversations in the memory layer.
EXCERPT_PREFIX = "turn:"

_ROLE_LABEL = {"user": "User", "assistant": "You"}


@dataclass(slots=True)
class _Excerpt:
    session_id: str
    lines: dict[tuple[int, int], str] = field(default_factory=dict)
    score: float = 0.0
    first: str = ""
    date: str = ""


def _key(item_id: str) -> tuple[int, int]:
    _, turn, role = item_id.rsplit(":", 2)
    return (int(turn), 0 if role == "user" else 1)


def _before(key: tuple[int, int]) -> tuple[int, int]:
    turn, side = key
    return (turn, 0) if side == 1 else (turn - 1, 1)


def _after(key: tuple[int, int]) -> tuple[int, int]:
    turn, side = key
    return (turn, 1) if side == 0 else (turn + 1, 0)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _line(text: str, role: str, speaker_known: bool) -> str:
    return text if speaker_known else f"{_ROLE_LABEL.get(role, role)}: {text}"


def layer_hits(
    items: Sequence[RecallItem], *, clip_chars: int = 600, now: datetime | None = None
) -> tuple[MemoryHit, ...]:
    """Memories and excerpts of past conversations for the memory layer, best first; a memory that does not hold
    at ``now`` (default: the clock's) says when it held."""
    when = now or utcnow()
    hits: list[MemoryHit] = []
    by_session: dict[str, dict[tuple[int, int], tuple[str, float, str]]] = {}
    follows: dict[str, set[tuple[tuple[int, int], tuple[int, int]]]] = {}  # (message, the next one) known adjacent
    for item in items:
        if item.kind is RecallKind.MEMORY:
            category = item.category.value if item.category is not None else None
            held = when_held(item.valid_from, item.valid_to, when)
            hits.append(MemoryHit(item.id, item.text, category, item.score, held))
            continue
        if item.session_id is None or item.role is None:
            continue
        lines = by_session.setdefault(item.session_id, {})
        key = _key(item.id)
        date = item.at.date().isoformat() if item.at else ""
        known = item.speaker is not None
        lines[key] = (_line(_clip(item.text, clip_chars), item.role, known), item.score, date)
        if item.context:
            # The message before is named by its id: it is the other side's only when that side said something
            # (a turn whose reply was not kept, offline, is followed by the user's next message).
            before, other = _before(key), "assistant" if item.role == "user" else "user"
            if item.context_id is not None:
                before, other = _key(item.context_id), item.context_id.rsplit(":", 1)[1]
            lines.setdefault(before, (_line(_clip(item.context, clip_chars), other, known), 0.0, date))
            follows.setdefault(item.session_id, set()).add((before, key))
    for session_id, lines in by_session.items():
        excerpt: _Excerpt | None = None
        previous: tuple[int, int] | None = None
        adjacent = follows.get(session_id, set())
        for key in sorted(lines):
            text, score, date = lines[key]
            if excerpt is None or previous is None or (_after(previous) != key and (previous, key) not in adjacent):
                if excerpt is not None:
                    hits.append(_hit(excerpt))
                role = "user" if key[1] == 0 else "assistant"
                excerpt = _Excerpt(session_id, first=f"{EXCERPT_PREFIX}{session_id}:{key[0]}:{role}", date=date)
            excerpt.lines[key] = text
            excerpt.score = max(excerpt.score, score)
            previous = key
        if excerpt is not None:
            hits.append(_hit(excerpt))
    hits.sort(key=lambda h: -h.score)
    return tuple(hits)


def _hit(excerpt: _Excerpt) -> MemoryHit:
    label = f"past conversation, {excerpt.date}" if excerpt.date else "past conversation"
    return MemoryHit(excerpt.first, "\n".join(excerpt.lines[k] for k in sorted(excerpt.lines)), label, excerpt.score)
