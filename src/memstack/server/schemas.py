"""The HTTP API's request and response bodies (pydantic v2). Domain types stay in :mod:`memstack.types`.

Responses are built by :mod:`memstack.server.wire` as plain JSON; these models document them in the OpenAPI schema
(and the fuzzing tests check that every response conforms).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memstack.types import MAX_CONTENT_CHARS, Category, DeletedBy, HistoryAction, Source

__all__ = [
    "AgentList",
    "AgentOut",
    "ChatIn",
    "ChatOut",
    "DeleteOut",
    "ErasureOut",
    "ErrorBody",
    "ErrorOut",
    "EventList",
    "EventOut",
    "ExportOut",
    "MemoryCreate",
    "MemoryList",
    "MemoryOut",
    "MemoryPatchIn",
    "MemoryUpdateOut",
    "SearchHit",
    "SearchIn",
    "SearchOut",
    "SessionOut",
    "UsageOut",
]

_ID = Field(min_length=1, max_length=200)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(BaseModel):
    type: str = Field(description="The error's class in memstack's error tree, e.g. NotFound, InputError")
    message: str = Field(description="What went wrong and what to do about it")


class ErrorOut(BaseModel):
    error: ErrorBody


class MemoryOut(BaseModel):
    id: str
    user_id: str
    agent_id: str | None
    content: str
    category: Category
    source: Source
    confidence: float
    is_active: bool
    deleted_by: DeletedBy | None
    created_at: datetime
    updated_at: datetime
    observed_at: datetime | None
    expires_at: datetime | None
    merged_into: str | None
    source_turn_ids: list[str]


class MemoryList(BaseModel):
    memories: list[MemoryOut]


class MemoryCreate(_In):
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="One short fact about the user")
    category: Category = Category.GENERAL
    agent_id: str | None = Field(default=None, min_length=1, max_length=200, description="Private to this agent")
    tier: str | None = Field(default=None, max_length=50, description="The user's tier (default: the default tier)")


class MemoryPatchIn(_In):
    content: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    category: Category | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)


class SearchIn(_In):
    query: str = Field(min_length=1, max_length=2000, description="Text to search for, by meaning")
    k: int = Field(default=5, ge=1, le=100, description="How many memories to return")
    category: list[Category] | None = Field(default=None, max_length=6, description="Only these categories")
    agent_id: str | None = Field(default=None, min_length=1, max_length=200)


class SearchHit(BaseModel):
    score: float = Field(description="Cosine similarity to the query")
    memory: MemoryOut


class SearchOut(BaseModel):
    results: list[SearchHit]


class DeleteOut(BaseModel):
    id: str
    permanent: bool = Field(description="True: gone for good (history kept); false: forgotten, restorable")
    memory: MemoryOut | None = Field(description="The forgotten memory (null after a permanent delete)")


class EventOut(BaseModel):
    id: int
    memory_id: str
    action: HistoryAction
    actor: str
    at: datetime
    note: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class EventList(BaseModel):
    events: list[EventOut]


class UsageOut(BaseModel):
    user_id: str
    tier: str
    active: int
    limit: int | None = Field(description="null: unlimited")
    remaining: int | None
    display: str = Field(description='For the UI, e.g. "37 / 50" or "37 / unlimited"')


class AgentOut(BaseModel):
    name: str
    definition: dict[str, Any]
    fingerprint: str = Field(description="sha256 of core + characteristics, as loaded")
    created_at: datetime
    updated_at: datetime


class AgentList(BaseModel):
    agents: list[AgentOut]


class ChatIn(_In):
    user_id: str = _ID
    session_id: str | None = Field(default=None, min_length=1, max_length=200, description="Omit to start one")
    message: str = Field(min_length=1, description="The user's message (the server's limit: 32,000 characters)")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Session metadata: timezone, local_time, user_agent, location, tier, coins, flags"
    )
    agent: str | None = Field(default=None, min_length=1, max_length=200, description="A stored agent's name")
    memory: bool = Field(default=True, description="false: no long-term memory read or written")
    temporary: bool = Field(default=False, description="true: nothing about this turn is stored")
    stream: bool = Field(default=False, description="true: server-sent events")


class MemoryUpdateOut(BaseModel):
    id: str | None
    content: str
    category: Category
    action: str = Field(description="created, updated, duplicate or dropped_limit")


class ChatOut(BaseModel):
    session_id: str
    reply: str
    memory_updates: list[MemoryUpdateOut] = Field(description="What this message saved (the badge), if in time")
    context_id: str | None = Field(description="GET /v1/contexts/{context_id}: what the model saw (null: temporary)")
    upgrade_prompt: str | None = Field(default=None, description="Set when an explicit save hit the tier limit")
    turn: int
    memory_pending: bool = Field(description="Detection was still running when the reply left (it saves anyway)")
    memories_used: list[str] = Field(description="Ids of the long-term memories placed in the context")
    model: str
    offline: bool = Field(description="The reply comes from the offline responder, not a model")


class FactOut(BaseModel):
    text: str
    hard_exception: bool
    since_turn: int


class TurnSummaryOut(BaseModel):
    turn: int
    user_summary: str
    assistant_summary: str
    unsummarized: bool


class RawMessageOut(BaseModel):
    role: str
    content: str
    turn: int
    at: datetime | None


class SessionOut(BaseModel):
    session_id: str
    user_id: str
    agent: str | None
    turn_count: int
    base_truth: list[FactOut]
    turn_log: list[TurnSummaryOut]
    raw_window: list[RawMessageOut]
    created_at: datetime | None
    updated_at: datetime | None
    ended_at: datetime | None


class ExportOut(BaseModel):
    """Everything held about one user: the document of ``memstack.users`` (format ``memstack.user-export``). Each
    memory carries its ``history``; each session its ``facts``, ``turns`` (the turn log with the raw exchanges),
    archived ``messages``, ``artifacts`` and ``snapshots``. Embedding vectors are not exported."""

    format: str = Field(description='Always "memstack.user-export"')
    version: int = Field(description="1; raised when a field is removed or renamed")
    tenant: str
    user_id: str
    exported_at: datetime
    vectors: str = Field(description="Why vectors are not in the export")
    memories: list[dict[str, Any]] = Field(
        description="Active, forgotten and superseded memories, each with its history (oldest first); a memory "
        "deleted for good appears with stored=false and only its history"
    )
    sessions: list[dict[str, Any]] = Field(
        description="Sessions with facts (base truth), turns, messages (archived), artifacts and snapshots"
    )
    contexts: list[dict[str, Any]] = Field(description="Stored context manifests (what the model saw per reply)")
    jobs: list[dict[str, Any]] = Field(description="Background jobs recorded for the user (memory detection, merges)")


class ErasureOut(BaseModel):
    """What ``DELETE /v1/users/{user_id}`` removed, in one transaction."""

    tenant: str
    user_id: str
    removed: dict[str, int] = Field(description="Rows removed per table (0 included)")
    indexes_dropped: int = Field(description="Per-user search indexes dropped (PostgreSQL, very large users)")
    total: int = Field(description="Rows removed in all")
