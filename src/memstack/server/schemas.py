"""The HTTP API's request and response bodies (pydantic v2). Domain types stay in :mod:`memstack.types`.

Responses are built by :mod:`memstack.server.wire` as plain JSON; these models document them in the OpenAPI schema
(and the fuzzing tests check that every response conforms).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memstack.types import (
    MAX_CONTENT_CHARS,
    MAX_METADATA_CHARS,
    Category,
    DeletedBy,
    HiddenKind,
    HistoryAction,
    RecallKind,
    Source,
)

__all__ = [
    "AS_OF_DOC",
    "AgentList",
    "AgentOut",
    "ChatIn",
    "ChatOut",
    "DelegateIn",
    "DelegatedTaskIn",
    "DeleteOut",
    "ErasureOut",
    "ErrorBody",
    "ErrorOut",
    "EventList",
    "EventOut",
    "ExportOut",
    "ForgetIn",
    "ForgetOut",
    "HiddenOut",
    "ImportList",
    "ImportOut",
    "IngestIn",
    "IngestMessageIn",
    "IngestOut",
    "MemoryAddedOut",
    "MemoryCreate",
    "MemoryList",
    "MemoryOut",
    "MemoryPatchIn",
    "MemoryUpdateOut",
    "RecallIn",
    "RecallItemOut",
    "RecallOut",
    "SearchHit",
    "SearchIn",
    "SearchOut",
    "SessionEndOut",
    "SessionList",
    "SessionOut",
    "SessionSummaryOut",
    "TokenUsageOut",
    "UsageOut",
    "WhoAmIOut",
]

_ID = Field(min_length=1, max_length=200)


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


_METADATA_DOC = (
    f"A JSON object kept with the memory (at most {MAX_METADATA_CHARS:,} characters as JSON), returned with it "
    'and filterable, e.g. {"project": "apollo"}'
)
_FILTER_DOC = (
    "Only memories whose metadata has each key given with the same value (exact match on top-level keys; values "
    'strings, numbers, booleans or null), e.g. {"project": "apollo"}'
)
AS_OF_DOC = (
    "What held at this time instead of what holds now (ISO 8601; without a zone it is taken as UTC): current "
    "memories and superseded past versions whose validity covers it, ranked as at that time; years 100 to 9899"
)
_K_DOC = "Deprecated: the old name of limit (accepted until memstack 0.3)"


class _Limited(_In):
    """A body counted by ``limit``, which still accepts its old name ``k`` (deprecated)."""

    limit: int
    k: int | None = Field(default=None, ge=1, le=100, description=_K_DOC, json_schema_extra={"deprecated": True})

    @model_validator(mode="after")
    def _old_name(self) -> _Limited:
        if self.k is not None:
            if "limit" in self.model_fields_set and self.limit != self.k:
                raise ValueError("pass limit (k is its deprecated old name), not both")
            self.limit = self.k
        return self


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
    metadata: dict[str, Any] = Field(description="The caller's JSON object kept with the memory ({} when none)")
    valid_from: datetime | None = Field(
        default=None, description="When it started to hold in the user's life (null: unknown), besides created_at"
    )
    valid_to: datetime | None = Field(
        default=None,
        description="When it stopped holding (null: still holds, or unknown); a superseded past version "
        "ends where its successor starts",
    )


class MemoryList(BaseModel):
    memories: list[MemoryOut]


class MemoryAddedOut(MemoryOut):
    """The memory an add stored (201, ``created``) or the one the user already had (200, ``duplicate``)."""

    action: str = Field(description="created: stored now (201); duplicate: already held, nothing stored (200)")
    reason: str = Field(description="Why it is a duplicate: the same text, or the dedup rule's explanation")


class MemoryCreate(_In):
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS, description="One short fact about the user")
    category: Category = Category.GENERAL
    agent_id: str | None = Field(default=None, min_length=1, max_length=200, description="Private to this agent")
    tier: str | None = Field(default=None, max_length=50, description="The user's tier (default: the default tier)")
    force: bool = Field(default=False, description="Store it even when the user already has this memory")
    metadata: dict[str, Any] | None = Field(default=None, description=_METADATA_DOC)
    valid_from: datetime | None = Field(
        default=None, description="When it started to hold in the user's life (ISO 8601; no zone: UTC)"
    )
    valid_to: datetime | None = Field(
        default=None, description="When it stopped holding (after valid_from); one already over is a past fact"
    )


class MemoryPatchIn(_In):
    content: str | None = Field(default=None, min_length=1, max_length=MAX_CONTENT_CHARS)
    category: Category | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    metadata: dict[str, Any] | None = Field(default=None, description="Replaces the memory's metadata ({}: clears it)")


class SearchIn(_Limited):
    query: str = Field(min_length=1, max_length=2000, description="Text to search for, by meaning")
    limit: int = Field(default=5, ge=1, le=100, description="How many memories to return at most")
    category: list[Category] | None = Field(default=None, max_length=6, description="Only these categories")
    agent_id: str | None = Field(default=None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = Field(default=None, description=_FILTER_DOC)
    min_score: float | None = Field(
        default=None, ge=-1.0, le=1.0, description="Leave out memories scoring below this (cosine, -1 to 1)"
    )
    as_of: datetime | None = Field(default=None, description=AS_OF_DOC)


class SearchHit(BaseModel):
    score: float = Field(
        description="Cosine similarity to the query, -1 to 1: higher is closer; unrelated memories score near 0, "
        "sometimes a little below (still unrelated, not opposite)"
    )
    memory: MemoryOut


class SearchOut(BaseModel):
    results: list[SearchHit]


class DeleteOut(BaseModel):
    id: str
    permanent: bool = Field(description="True: gone for good (history kept); false: forgotten, restorable")
    memory: MemoryOut | None = Field(description="The forgotten memory (null after a permanent delete)")


class ForgetIn(_In):
    query: str = Field(min_length=1, max_length=1000, description="What to forget everything about, e.g. 'my cat'")
    dry_run: bool = Field(default=False, description="Only show what would be forgotten and hidden; change nothing")


class HiddenOut(BaseModel):
    kind: HiddenKind = Field(description="turn: an exchange of a session; fact: a session fact; line: a summary line")
    session_id: str
    turn: int = Field(description="The exchange's number (kind turn; 0 otherwise)")
    text: str = Field(description="The fact or line hidden; for an exchange, its user message (clipped)")
    memory_id: str = Field(description="The memory whose forget hides it")
    reason: str = Field(description="source: the memory came from it; mentions: it says what the memory says")


class ForgetOut(BaseModel):
    query: str
    dry_run: bool = Field(description="True: a preview, nothing was changed")
    memories: list[MemoryOut] = Field(description="Forgotten (restorable one by one), or what would be in a preview")
    hidden: list[HiddenOut] = Field(description="What stops reaching the model with them (each thing once)")


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
    dropped: int = Field(description="Automatic captures a full tier kept from being stored, all time")
    last_dropped_at: datetime | None = Field(description="When the last of them was")
    models: list[ModelUsageOut] = Field(
        default_factory=list, description="The user's model calls by role and model, since this process started"
    )
    cost_usd: float | None = Field(
        default=None, description="Their estimated cost (null when any model has no known price)"
    )


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
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Omit to continue the user's current session (their latest with this agent, unless ended)",
    )
    new_session: bool = Field(default=False, description="true: start a new session instead (without session_id)")
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
    action: str = Field(
        description="created, updated, duplicate, or dropped_limit: the user's tier is full and this automatic "
        "capture was not stored (tier and limit say which)"
    )
    tier: str | None = Field(default=None, description="dropped_limit: the tier that is full")
    limit: int | None = Field(default=None, description="dropped_limit: that tier's memory limit")


class ModelUsageOut(BaseModel):
    role: str = Field(description="chat, classifier, update_judge, summarizer, embeddings (or other)")
    model: str
    calls: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cost_usd: float | None = Field(description="Estimated from the price table; null: the model has no known price")


class TokenUsageOut(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    estimated: bool = Field(description="The model reported no usage: memstack's count of the context and reply")
    cost_usd: float | None = Field(
        default=None, description="The chat model's estimated cost (null: no priced model answered)"
    )
    roles: list[ModelUsageOut] = Field(
        default_factory=list, description="The turn's model calls before the reply, by role and model"
    )


class TenantUsageOut(BaseModel):
    tenant: str
    since: datetime = Field(description="When this server process started counting")
    models: list[ModelUsageOut] = Field(description="Model calls for the tenant's users, by role and model")
    cost_usd: float | None = Field(description="Their estimated cost (null when any model has no known price)")


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
    usage: TokenUsageOut | None = Field(default=None, description="Tokens of the turn's model calls")


class FactOut(BaseModel):
    text: str
    hard_exception: bool
    since_turn: int


class TurnSummaryOut(BaseModel):
    turn: int
    user_summary: str
    assistant_summary: str
    unsummarized: bool


class ArchivedTurnOut(BaseModel):
    session_id: str
    turn: int
    user: str = Field(description="The user's message (empty when a forgotten memory hides the exchange)")
    assistant: str = Field(description="The reply (empty when hidden)")
    at: datetime
    status: str = Field(description="pending, summarized or unsummarized (phase 2's state of the turn)")
    route: str
    user_summary: str
    assistant_summary: str
    outcome: str
    attempts: int
    flags: list[str] = Field(description="``hidden``: a forgotten memory hides the exchange, its texts withheld")


class TurnList(BaseModel):
    turns: list[ArchivedTurnOut]


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


# -- recall, import, session listings, delegation (the library's recall, ingest, sessions, end_session, delegate) --


class RecallIn(_Limited):
    query: str = Field(min_length=1, max_length=2000, description="What to recall, in the user's words")
    limit: int = Field(default=10, ge=1, le=100, description="How many items to return at most")
    min_score: float | None = Field(
        default=None, ge=0.0, description="Leave out items scoring below this (a ranking score, 0 or more)"
    )
    at: datetime | None = Field(
        default=None, description='When the question is asked: "two weeks ago" is read against it (default: now)'
    )
    kinds: list[RecallKind] | None = Field(
        default=None, max_length=2, description="memory, turn or both (default: both)"
    )
    exclude_session: str | None = Field(
        default=None, min_length=1, max_length=200, description="Leave out this session's messages"
    )
    agent_id: str | None = Field(default=None, min_length=1, max_length=200, description="Also this agent's memories")
    as_of: datetime | None = Field(default=None, description=AS_OF_DOC)


class RecallItemOut(BaseModel):
    kind: RecallKind = Field(description="memory: a long-term memory; turn: one message of an archived exchange")
    id: str = Field(description="A memory's id, or session_id:turn:role for an archived message")
    text: str
    score: float = Field(description="A ranking score, 0 or more, comparable within one answer (not a similarity)")
    at: datetime | None = Field(description="When it was observed or said")
    source_turn_ids: list[str] = Field(description="The archived exchanges (session_id:turn) it comes from")
    session_id: str | None
    role: str | None = Field(description="user or assistant (archived messages)")
    speaker: str | None = Field(description="Who said it, when imported with speaker names")
    category: Category | None = Field(description="The memory's category (memories)")
    context: str = Field(description="The message before an archived one in its conversation")
    context_id: str | None = Field(
        default=None, description="That message's id (session_id:turn:role: its role is the last part)"
    )
    valid_from: datetime | None = Field(default=None, description="A memory's validity start (null: unknown)")
    valid_to: datetime | None = Field(default=None, description="A memory's validity end (null: holds, or unknown)")


class RecallOut(BaseModel):
    results: list[RecallItemOut]


class IngestMessageIn(_In):
    content: str = Field(description="The message's text (the server's limit: 32,000 characters)")
    role: str | None = Field(default=None, description="user or assistant (or give speaker)")
    speaker: str | None = Field(default=None, description="Who said it; the one equal to user_speaker is the user")
    at: str | None = Field(default=None, description="ISO 8601 time (naive: UTC; missing: the previous message's)")


class IngestIn(_In):
    session_id: str = Field(
        min_length=1, max_length=200, description="The session to import into (appends what it has not archived yet)"
    )
    messages: list[IngestMessageIn] = Field(min_length=1, description="The conversation, in order")
    user_speaker: str | None = Field(default=None, min_length=1, max_length=200, description="The user's name")
    agent: str | None = Field(default=None, min_length=1, max_length=200, description="The session's agent")
    capture: bool = Field(default=True, description="Run memory capture on the user's messages")
    tier: str | None = Field(default=None, max_length=50, description="The user's tier (default: the default tier)")
    end: bool = Field(default=True, description="End the session afterwards (writes its cross-session line)")


class SessionSummaryOut(BaseModel):
    session_id: str
    user_id: str
    agent: str | None
    turn_count: int
    line: str = Field(description="The cross-session line later sessions see (empty until written)")
    line_turn: int = Field(description="The turn the line was written after (stale when below turn_count)")
    flagged: int = Field(description="Turns whose summary is still due")
    created_at: datetime | None
    updated_at: datetime | None
    ended_at: datetime | None
    ended: bool


class SessionList(BaseModel):
    sessions: list[SessionSummaryOut]


class SessionEndOut(BaseModel):
    session_id: str
    ended: bool = Field(description="Always true: the session is closed")
    summary: SessionSummaryOut | None = Field(description="null for a temporary session or one without turns")


class IngestOut(BaseModel):
    session_id: str
    turns: list[str] = Field(description="The archived exchanges (session_id:turn), in order")
    message_ids: list[str] = Field(description="For each message given, the archived message it became")
    memory_updates: list[MemoryUpdateOut] = Field(description="What memory capture did")
    summary: SessionSummaryOut | None = Field(description="The session's summary when the import ended it")


class DelegatedTaskIn(_In):
    instructions: str = Field(default="", description="What the child agent should do")
    payload: Any = Field(default=None, description="The data it works on (text or JSON)")
    output_schema: Any = Field(default=None, description="The shape of the answer (text or JSON)")
    parent: str | None = Field(default=None, min_length=1, max_length=200)


class DelegateIn(_In):
    user_id: str = _ID
    parent: str = Field(min_length=1, max_length=200, description="The delegating agent's name")
    child: str | None = Field(
        default=None, min_length=1, max_length=200, description="A stored agent's name (default: the built-in agent)"
    )
    task: DelegatedTaskIn | str = Field(description="The task spec, or plain instructions")
    session_id: str | None = Field(default=None, min_length=1, max_length=200, description="Omit to start one")
    metadata: dict[str, Any] | None = Field(default=None, description="Session metadata, as for /v1/chat")
    memory: bool = Field(default=True, description="false: no long-term memory read or written")
    temporary: bool = Field(default=False, description="true: nothing about this run is stored")


class ExportOut(BaseModel):
    """Everything held about one user: the document of ``memstack.users`` (format ``memstack.user-export``). Each
    memory carries its ``history``; each session its ``facts``, ``turns`` (the turn log with the raw exchanges),
    archived ``messages``, ``artifacts`` and ``snapshots``. Embedding vectors are not exported."""

    format: str = Field(description='Always "memstack.user-export"')
    version: int = Field(description="2; raised when a field is removed or renamed (an import reads 1 and 2)")
    tenant: str
    user_id: str
    exported_at: datetime
    vectors: str = Field(description="Why vectors are not in the export")
    responses: str = Field(description="Why responses kept under an Idempotency-Key are not in the export")
    memories: list[dict[str, Any]] = Field(
        description="Active, forgotten and superseded memories, each with its history (oldest first); a memory "
        "deleted for good appears with stored=false and only its history"
    )
    sessions: list[dict[str, Any]] = Field(
        description="Sessions with facts (base truth), turns, messages (archived), artifacts and snapshots"
    )
    contexts: list[dict[str, Any]] = Field(description="Stored context manifests (what the model saw per reply)")
    jobs: list[dict[str, Any]] = Field(description="Background jobs recorded for the user (memory detection, merges)")
    dropped_captures: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Automatic captures a full tier kept from being stored: count, first_at, last_at (0 or 1 entry)",
    )
    sha256: str = Field(
        description="SHA-256 of the owner and every record as written, last in the document: an import refuses a "
        "document cut short or changed after the export"
    )


class ErasureOut(BaseModel):
    """What ``DELETE /v1/users/{user_id}`` removed, in one transaction."""

    tenant: str
    user_id: str
    removed: dict[str, int] = Field(description="Rows removed per table (0 included)")
    indexes_dropped: int = Field(description="Per-user search indexes dropped (PostgreSQL, very large users)")
    total: int = Field(description="Rows removed in all")


class ImportOut(BaseModel):
    """What ``POST /v1/users/import`` wrote for one user."""

    tenant: str
    user_id: str
    added: dict[str, int] = Field(description="Rows written per table (JSONL: messages, turns, memory_updates)")
    unchanged: bool = Field(description="The store held what was imported already: nothing was written")
    skipped: int = Field(description="Records not imported: mem0 memories imported before")
    total: int = Field(description="Rows written in all")


class ImportList(BaseModel):
    users: list[ImportOut] = Field(description="One report per user imported")


class UserSummaryOut(BaseModel):
    user_id: str
    memories: int = Field(description="Active memories")
    sessions: int = Field(description="Sessions, open or ended")
    last_active: str | None = Field(description="When a memory or session of the user last changed (ISO 8601)")


class UserList(BaseModel):
    """A page of ``GET /v1/users``."""

    users: list[UserSummaryOut] = Field(description="In user-id order (byte order)")
    next: str | None = Field(
        description="Pass as after= for the next page; null when this page is not full (a full last page is "
        "followed by an empty one)"
    )


class WhoAmIOut(BaseModel):
    """Who the server takes the caller for (``GET /v1/whoami``): what the Python client fills ``tenant`` with."""

    tenant: str = Field(description="The API key's tenant (default: a local-mode request without a key)")
    key_id: str | None = Field(description="The key's id (null: local mode without a key)")
