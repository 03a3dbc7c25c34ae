"""What the model reads from a tool: one short line per memory or recalled item.

A tool's answer has two parts. ``structuredContent`` keeps every field (the HTTP API's JSON), for clients that read
data; the text part is what most clients put in the model's context, and the SDK made it the same dict as indented
JSON: about 17 lines per memory, mostly ids, nulls and timestamps the model has no use for. Here each memory is one
line, ``mem_… [category] content``, with its state when it is not active, and each recalled item says what it is,
its score and date.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from mcp.types import CallToolResult, TextContent

from memstack.dates import when_held
from memstack.types import utcnow

__all__ = ["added", "forgotten", "memories", "one", "recalled", "result", "scored"]


def result(data: dict[str, Any], text: str) -> CallToolResult:
    """A tool's answer: ``text`` for the model, ``data`` whole as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _day(value: Any) -> str:
    return str(value)[:10] if value else ""


def one(m: Mapping[str, Any]) -> str:
    """``mem_… [category] content``, then ``(forgotten)`` or ``(merged into mem_…)`` when it is not active, and when
    it held (``(until March 2026)``, :func:`memstack.dates.when_held`) when it does not hold now."""
    line = f"{m['id']} [{m['category']}] {m['content']}"
    if m.get("merged_into"):
        return f"{line} (merged into {m['merged_into']})"
    start, end = _time(m.get("valid_from")), _time(m.get("valid_to"))
    if (held := when_held(start, end, utcnow())) is not None and not m.get("deleted_by"):
        return f"{line} ({held})"
    if not m.get("is_active", True):
        return f"{line} (forgotten)"
    return line


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) and value else None


def added(m: Mapping[str, Any]) -> str:
    if m.get("action") == "duplicate":
        return f"Already held, nothing stored ({m.get('reason') or 'the same memory'}): {one(m)}"
    return f"Saved: {one(m)}"


def memories(found: Sequence[Mapping[str, Any]], empty: str) -> str:
    return "\n".join(one(m) for m in found) if found else empty


def scored(hits: Sequence[Mapping[str, Any]]) -> str:
    if not hits:
        return "No memory matches."
    return "\n".join(f"{hit['score']:.2f} {one(hit['memory'])}" for hit in hits)


def forgotten(data: Mapping[str, Any]) -> str:
    """A forget by query: what it forgot (or would, on a dry run) and how much of the past it hides."""
    found: Sequence[Mapping[str, Any]] = data["memories"]
    if not found:
        return f"No memory is about {data['query']!r}; nothing forgotten."
    verb = "Would forget" if data["dry_run"] else "Forgot"
    lines = [f"{verb} {len(found)} memor{'y' if len(found) == 1 else 'ies'} about {data['query']!r}:"]
    lines += [one(m) for m in found]
    if data["hidden"]:
        lines.append(f"{'Would hide' if data['dry_run'] else 'Hidden'} with them: {len(data['hidden'])} mentions")
    return "\n".join(lines)


def recalled(items: Sequence[Mapping[str, Any]]) -> str:
    """One line per item: score, a memory's id and category, or who said it in which session; its date; the text."""
    if not items:
        return "Nothing recalled."
    lines = []
    for item in items:
        when = _day(item.get("at"))
        if item["kind"] == "memory":
            where = f"memory {item['id']} [{item.get('category') or 'general'}]"
        else:
            who = item.get("speaker") or item.get("role") or "someone"
            where = f"{who} in session {item.get('session_id')}"
        lines.append(f"{item['score']:.2f} {where}{f' {when}' if when else ''}: {item['text']}")
    return "\n".join(lines)
