"""The server's JSON (the shapes of :mod:`memstack.server.wire`) back into the library's domain types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memstack.errors import ImportRefused
from memstack.imports import MAX_IMPORT_BYTES
from memstack.types import (
    AddResult,
    AgentRecord,
    ArchivedTurn,
    Category,
    ChatResult,
    DeletedBy,
    ErasureReport,
    Fact,
    Forgetting,
    HiddenItem,
    HiddenKind,
    HistoryAction,
    ImportReport,
    IngestResult,
    Memory,
    MemoryEvent,
    MemoryUpdate,
    RawMessage,
    RecallItem,
    RecallKind,
    ScoredMemory,
    SessionState,
    SessionSummary,
    Source,
    TokenUsage,
    TurnStatus,
    TurnSummary,
    UpdateAction,
    UserSummary,
)
from memstack.types.memories import stored_metadata

__all__ = [
    "add_result",
    "agent_record",
    "chat_result",
    "erasure",
    "event",
    "forgetting",
    "import_body",
    "import_report",
    "ingest_result",
    "memory",
    "recall_item",
    "scored",
    "session_state",
    "session_summary",
    "user_summary",
]

Json = Mapping[str, Any]


def _ts(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def memory(data: Json, tenant: str) -> Memory:
    return Memory(
        id=data["id"],
        user_id=data["user_id"],
        tenant=tenant,
        agent_id=data.get("agent_id"),
        content=data["content"],
        category=Category(data["category"]),
        source=Source(data["source"]),
        confidence=float(data["confidence"]),
        is_active=bool(data["is_active"]),
        deleted_by=DeletedBy(data["deleted_by"]) if data.get("deleted_by") else None,
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
        observed_at=_ts(data.get("observed_at")),
        expires_at=_ts(data.get("expires_at")),
        merged_into=data.get("merged_into"),
        source_turn_ids=tuple(data.get("source_turn_ids") or ()),
        metadata=stored_metadata(data.get("metadata")),  # checked by the server that stored it
        valid_from=_ts(data.get("valid_from")),
        valid_to=_ts(data.get("valid_to")),
    )


def forgetting(data: Json, tenant: str) -> Forgetting:
    """``POST …/memories/forget``'s answer."""
    hidden = tuple(
        HiddenItem(
            HiddenKind(h["kind"]), h["session_id"], int(h["turn"]), h["text"], h["memory_id"], h.get("reason", "")
        )
        for h in data["hidden"]
    )
    memories = tuple(memory(m, tenant) for m in data["memories"])
    return Forgetting(data["query"], memories, hidden, bool(data["dry_run"]))


def add_result(data: Json, tenant: str) -> AddResult:
    """``POST …/memories``'s answer: the memory and what the add did (``created`` when the server says nothing)."""
    action = UpdateAction(data.get("action") or UpdateAction.CREATED.value)
    return AddResult(memory(data, tenant), action, str(data.get("reason") or ""))


def scored(data: Json, tenant: str) -> ScoredMemory:
    return ScoredMemory(memory(data["memory"], tenant), float(data["score"]))


def event(data: Json) -> MemoryEvent:
    return MemoryEvent(
        id=int(data["id"]),
        memory_id=data["memory_id"],
        action=HistoryAction(data["action"]),
        before=data.get("before"),
        after=data.get("after"),
        at=datetime.fromisoformat(data["at"]),
        actor=data["actor"],
        note=data.get("note") or "",
    )


def archived_turn(data: Json, user_id: str, tenant: str) -> ArchivedTurn:
    """An archived exchange as ``GET /v1/sessions/{id}/turns`` shows it (what it leaves out keeps its default)."""
    return ArchivedTurn(
        session_id=data["session_id"],
        turn=int(data["turn"]),
        user=data["user"],
        assistant=data["assistant"],
        at=_ts(data["at"]) or datetime.min,
        status=TurnStatus(data["status"]),
        user_id=user_id,
        tenant=tenant,
        route=data.get("route") or "",
        user_summary=data.get("user_summary") or "",
        assistant_summary=data.get("assistant_summary") or "",
        outcome=data.get("outcome") or "",
        attempts=int(data.get("attempts") or 0),
        flags=tuple(data.get("flags") or ()),
    )


def session_summary(data: Json, tenant: str) -> SessionSummary:
    return SessionSummary(
        session_id=data["session_id"],
        user_id=data["user_id"],
        tenant=tenant,
        agent=data.get("agent"),
        turn_count=int(data["turn_count"]),
        line=data.get("line") or "",
        line_turn=int(data.get("line_turn") or 0),
        flagged=int(data.get("flagged") or 0),
        created_at=_ts(data.get("created_at")),
        updated_at=_ts(data.get("updated_at")),
        ended_at=_ts(data.get("ended_at")),
    )


def session_state(data: Json, tenant: str) -> SessionState:
    """A session's memory as ``GET /v1/sessions/{id}`` shows it; what the API leaves out (the state's ``version``,
    flagged turns, the last consolidation, how long a long message stays) keeps its default."""
    return SessionState(
        session_id=data["session_id"],
        user_id=data["user_id"],
        tenant=tenant,
        agent=data.get("agent"),
        turn_count=int(data["turn_count"]),
        base_truth=tuple(
            Fact(f["text"], bool(f.get("hard_exception")), int(f.get("since_turn") or 0)) for f in data["base_truth"]
        ),
        turn_log=tuple(
            TurnSummary(int(t["turn"]), t["user_summary"], t["assistant_summary"], bool(t.get("unsummarized")))
            for t in data["turn_log"]
        ),
        raw_window=tuple(
            RawMessage(m["role"], m["content"], int(m["turn"]), _ts(m.get("at"))) for m in data["raw_window"]
        ),
        created_at=_ts(data.get("created_at")),
        updated_at=_ts(data.get("updated_at")),
        ended_at=_ts(data.get("ended_at")),
    )


def agent_record(data: Json, tenant: str) -> AgentRecord:
    return AgentRecord(
        tenant=tenant,
        name=data["name"],
        definition=dict(data["definition"]),
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
    )


def chat_result(data: Json, *, memory_enabled: bool, temporary: bool) -> ChatResult:
    usage = data.get("usage")
    return ChatResult(
        session_id=data["session_id"],
        reply=data["reply"],
        turn=int(data["turn"]),
        memory_updates=tuple(MemoryUpdate.from_dict(u) for u in data.get("memory_updates") or ()),
        context_id=data.get("context_id"),
        upgrade_prompt=data.get("upgrade_prompt"),
        memory_pending=bool(data.get("memory_pending", False)),
        memories_used=tuple(data.get("memories_used") or ()),
        model=data.get("model") or "",
        offline=bool(data.get("offline", False)),
        memory_enabled=memory_enabled,
        temporary=temporary,
        usage=None
        if usage is None
        else TokenUsage(int(usage["prompt_tokens"]), int(usage["completion_tokens"]), bool(usage.get("estimated"))),
    )


def recall_item(data: Json) -> RecallItem:
    return RecallItem(
        kind=RecallKind(data["kind"]),
        id=data["id"],
        text=data["text"],
        score=float(data["score"]),
        at=_ts(data.get("at")),
        source_turn_ids=tuple(data.get("source_turn_ids") or ()),
        session_id=data.get("session_id"),
        role=data.get("role"),
        speaker=data.get("speaker"),
        category=Category(data["category"]) if data.get("category") else None,
        context=data.get("context") or "",
        context_id=data.get("context_id"),
        valid_from=_ts(data.get("valid_from")),
        valid_to=_ts(data.get("valid_to")),
    )


def ingest_result(data: Json, tenant: str) -> IngestResult:
    summary = data.get("summary")
    return IngestResult(
        session_id=data["session_id"],
        turns=tuple(data.get("turns") or ()),
        message_ids=tuple(data.get("message_ids") or ()),
        memory_updates=tuple(MemoryUpdate.from_dict(u) for u in data.get("memory_updates") or ()),
        summary=None if summary is None else session_summary(summary, tenant),
    )


def erasure(data: Json) -> ErasureReport:
    removed = {str(k): int(v) for k, v in (data.get("removed") or {}).items()}
    return ErasureReport(data["tenant"], data["user_id"], removed, int(data.get("indexes_dropped") or 0))


def import_report(data: Json) -> ImportReport:
    added = {str(k): int(v) for k, v in (data.get("added") or {}).items()}
    return ImportReport(
        data["tenant"], data["user_id"], added, bool(data.get("unchanged")), int(data.get("skipped") or 0)
    )


def import_body(document: str | bytes | Mapping[str, Any], max_bytes: int | None) -> Any:
    """An export document as the import route takes it: parsed (``ImportRefused`` for one too large or not JSON)."""
    if isinstance(document, Mapping):
        return document
    limit = MAX_IMPORT_BYTES if max_bytes is None else max_bytes
    if len(document) > limit:
        raise ImportRefused(
            f"the document is more than the {limit} bytes an import reads at once; nothing was imported"
        )
    try:
        return json.loads(document)
    except ValueError:
        raise ImportRefused(
            "the document is not one complete JSON object: it was cut short or is not an export; export the user "
            "again; nothing was imported"
        ) from None


def user_summary(data: Json) -> UserSummary:
    return UserSummary(data["user_id"], int(data["memories"]), int(data["sessions"]), _ts(data.get("last_active")))
