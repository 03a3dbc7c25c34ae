"""Domain values → JSON-able dicts in the shapes of :mod:`memstack.server.schemas` (built by hand: the hot paths
skip a validation round per response)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from starlette.responses import Response

from memstack.types import (
    AgentRecord,
    ArchivedTurn,
    Forgetting,
    IngestResult,
    Memory,
    MemoryEvent,
    MemoryUsage,
    ModelUsage,
    ScoredMemory,
    SessionSummary,
)

__all__ = [
    "SSE_EVENT",
    "MemoryFragments",
    "agent_json",
    "archived_turn_json",
    "event_json",
    "forgetting_json",
    "ingest_json",
    "json_response",
    "memory_json",
    "scored_json",
    "session_summary_json",
    "total_cost",
    "usage_json",
]


#: The OpenAPI schema of one server-sent event of a ``text/event-stream`` answer (OpenAPI reads a stream's schema
#: per event): its ``data`` line (JSON, or ``[DONE]``), and the ``event`` name where the stream names its events.
SSE_EVENT: dict[str, Any] = {
    "type": "object",
    "properties": {"event": {"type": "string"}, "data": {"type": "string"}, "id": {"type": "string"}},
    "required": ["data"],
}


def _ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def memory_json(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "user_id": m.user_id,
        "agent_id": m.agent_id,
        "content": m.content,
        "category": m.category.value,
        "source": m.source.value,
        "confidence": m.confidence,
        "is_active": m.is_active,
        "deleted_by": m.deleted_by.value if m.deleted_by else None,
        "created_at": m.created_at.isoformat(),
        "updated_at": m.updated_at.isoformat(),
        "observed_at": _ts(m.observed_at),
        "expires_at": _ts(m.expires_at),
        "merged_into": m.merged_into,
        "source_turn_ids": list(m.source_turn_ids),
        "metadata": dict(m.metadata),
        "valid_from": _ts(m.valid_from),
        "valid_to": _ts(m.valid_to),
    }


def forgetting_json(f: Forgetting) -> dict[str, Any]:
    return {
        "query": f.query,
        "dry_run": f.dry_run,
        "memories": [memory_json(m) for m in f.memories],
        "hidden": [i.to_dict() for i in f.hidden],
    }


def scored_json(hit: ScoredMemory) -> dict[str, Any]:
    return {"score": float(hit.score), "memory": memory_json(hit.memory)}


def event_json(e: MemoryEvent) -> dict[str, Any]:
    return {
        "id": e.id,
        "memory_id": e.memory_id,
        "action": e.action.value,
        "actor": e.actor,
        "at": e.at.isoformat(),
        "note": e.note,
        "before": e.before,
        "after": e.after,
    }


def usage_json(user_id: str, usage: MemoryUsage) -> dict[str, Any]:
    limit = "unlimited" if usage.limit is None else str(usage.limit)
    return {
        "user_id": user_id,
        "tier": usage.tier,
        "active": usage.active,
        "limit": usage.limit,
        "remaining": usage.remaining,
        "display": f"{usage.active} / {limit}",
        "dropped": usage.dropped,
        "last_dropped_at": None if usage.last_dropped_at is None else usage.last_dropped_at.isoformat(),
        "models": [m.to_dict() for m in usage.models],
        "cost_usd": total_cost(usage.models),
    }


def total_cost(models: Sequence[ModelUsage]) -> float | None:
    """What ``models`` cost together; ``None`` when any of them has no price (a partial sum would understate it)."""
    costs = [m.cost_usd for m in models]
    return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)


def agent_json(record: AgentRecord, fingerprint: str) -> dict[str, Any]:
    return {
        "name": record.name,
        "definition": record.definition,
        "fingerprint": fingerprint,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
    }


def archived_turn_json(t: ArchivedTurn) -> dict[str, Any]:
    """An archived exchange (schemas.ArchivedTurnOut)."""
    return {
        "session_id": t.session_id,
        "turn": t.turn,
        "user": t.user,
        "assistant": t.assistant,
        "at": t.at.isoformat(),
        "status": t.status.value,
        "route": t.route,
        "user_summary": t.user_summary,
        "assistant_summary": t.assistant_summary,
        "outcome": t.outcome,
        "attempts": t.attempts,
        "flags": list(t.flags),
    }


def session_summary_json(s: SessionSummary) -> dict[str, Any]:
    """A session as listed (schemas.SessionSummaryOut); the tenant is the caller's and is left out."""
    return {
        "session_id": s.session_id,
        "user_id": s.user_id,
        "agent": s.agent,
        "turn_count": s.turn_count,
        "line": s.line,
        "line_turn": s.line_turn,
        "flagged": s.flagged,
        "created_at": _ts(s.created_at),
        "updated_at": _ts(s.updated_at),
        "ended_at": _ts(s.ended_at),
        "ended": s.ended_at is not None,
    }


def ingest_json(result: IngestResult) -> dict[str, Any]:
    """What an import did (schemas.IngestOut)."""
    return {
        "session_id": result.session_id,
        "turns": list(result.turns),
        "message_ids": list(result.message_ids),
        "memory_updates": [u.to_dict() for u in result.memory_updates],
        "summary": None if result.summary is None else session_summary_json(result.summary),
    }


def json_response(data: Any, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Response(body.encode("utf-8"), status_code=status, media_type="application/json")


class MemoryFragments:
    """The JSON text of memories, kept per memory object: search answers come from the store's cache, whose rows are
    the same (immutable) objects from one search to the next, so each is serialised once, not once per answer.

    Keyed by object identity; the entry holds the object itself, so an id is never reused while its entry lives."""

    def __init__(self, max_entries: int = 50_000) -> None:
        self._max = max_entries
        self._texts: dict[int, tuple[Memory, str]] = {}

    def text(self, memory: Memory) -> str:
        hit = self._texts.get(id(memory))
        if hit is not None and hit[0] is memory:
            return hit[1]
        text = json.dumps(memory_json(memory), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if len(self._texts) >= self._max:
            self._texts.clear()
        self._texts[id(memory)] = (memory, text)
        return text

    def forget(self, tenant: str, user_id: str) -> None:
        """Drop the kept texts of one user's memories (the user was erased)."""
        for key in [k for k, (m, _) in self._texts.items() if m.tenant == tenant and m.user_id == user_id]:
            del self._texts[key]

    def search_response(self, hits: Sequence[ScoredMemory]) -> Response:
        """``{"results": [{"score", "memory"}, …]}`` (schemas.SearchOut), built from the kept texts."""
        parts = []
        for hit in hits:
            score = float(hit.score)
            parts.append(f'{{"score":{score if math.isfinite(score) else 0.0!r},"memory":{self.text(hit.memory)}}}')
        body = '{"results":[' + ",".join(parts) + "]}"
        return Response(body.encode("utf-8"), media_type="application/json")
