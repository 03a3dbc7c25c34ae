"""Layered context assembly: one :class:`ContextRequest` in, one :class:`AssembledContext` out.

Pure and fast: no I/O, no model calls; no embedding calls either unless a semantic content guard is passed (it embeds
the texts it has not seen). Steps, in order:

1. fragments for every layer of the stack, from the request's plain values;
2. :func:`~memstack.context.validate.validate_no_override` (structure raises, content is neutralized or quarantined);
3. token counts (cached per rendered unit) and the trim policy (:mod:`memstack.context.budget`);
4. rendering (:mod:`memstack.context.render`) and the manifest.

Modes: ``memory_enabled=False`` leaves layers 6-7 empty and marks the result ``remember=False`` (no long-term read
or write) while the session layer keeps working; ``temporary=True`` additionally marks ``persist=False``: the engine
stores nothing of the turn, not even the manifest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from memstack.context import render as r
from memstack.context.agent import Agent, default_agent
from memstack.context.budget import CachedCounter, Slot, fit_budget
from memstack.context.manifest import Manifest, ManifestEntry
from memstack.context.session_meta import SessionMeta, build_session, client_lines, render_session
from memstack.context.stack import DEFAULT_STACK, LayerSpec, LayerStack, OnFlag, Placement, Trim
from memstack.context.validate import authority_text, check_structure, content_verdicts, verdict_reason
from memstack.dates import when_held
from memstack.errors import InputError
from memstack.guard import FLAGS, ContentGuard
from memstack.types import (
    Fact,
    Fragment,
    FragmentStatus,
    Layer,
    RawMessage,
    ScoredMemory,
    TurnSummary,
    new_id,
    utcnow,
)
from memstack.types.context import withhold

__all__ = [
    "AssembledContext",
    "ContextRequest",
    "DelegatedTask",
    "MemoryHit",
    "SummaryLine",
    "assemble",
    "turn_log_text",
]

_MESSAGE_OVERHEAD = 3  # tokens the chat format adds per message (role and separators)
_REPLY_PRIMING = 3  # tokens that prime the reply


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """A retrieved long-term memory: id, text, category and retrieval score."""

    id: str
    content: str
    category: str | None = None
    score: float = 0.0
    #: When it held, for a memory that does not hold now ("until March 2026": :func:`memstack.dates.when_held`).
    held: str | None = None

    @classmethod
    def from_scored(cls, hit: ScoredMemory, now: datetime | None = None) -> MemoryHit:
        m = hit.memory
        return cls(m.id, m.content, m.category.value, hit.score, when_held(m.valid_from, m.valid_to, now or utcnow()))


@dataclass(frozen=True, slots=True)
class SummaryLine:
    """One past conversation in a line (layer 7)."""

    id: str
    text: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class DelegatedTask:
    """A task spec from a parent agent (layer 4); ``payload`` and ``output_schema`` may be text or JSON values."""

    instructions: str
    payload: Any = None
    output_schema: Any = None
    parent: str | None = None


_NO_EXTRA: Mapping[str, tuple[str, ...]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """Everything one assembly needs, as plain values (the engine gathers them; nothing here does I/O)."""

    message: str
    agent: Agent = field(default_factory=default_agent)
    session: SessionMeta | None = None  # None: built from no client values (UTC, now)
    delegated: DelegatedTask | None = None
    facts: tuple[Fact, ...] = ()
    memories: tuple[MemoryHit, ...] = ()  # candidates, any order; ranked by score x category weight
    summaries: tuple[SummaryLine, ...] = ()  # oldest first
    turn_log: tuple[TurnSummary, ...] = ()
    thread: tuple[RawMessage, ...] = ()  # the raw window, oldest first
    budget_tokens: int | None = None  # None: the agent's budget
    model: str | None = None  # None: the agent's model (tokenizer family)
    memory_enabled: bool = True
    temporary: bool = False
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _NO_EXTRA)  # text of added layers, by key
    context_id: str | None = None


class _Part:
    """The assembler's working record of one fragment (mutable; a ``Fragment`` is made from it on demand)."""

    __slots__ = (
        "cost",
        "flags",
        "kept",
        "label",
        "layer",
        "pinned",
        "reason",
        "role",
        "score",
        "source",
        "status",
        "text",
        "tokens",
        "unit",
        "wrapped",
    )

    def __init__(
        self,
        layer: Layer | str,
        source: str,
        text: str,
        unit: str,
        *,
        pinned: bool = False,
        role: str | None = None,
        score: float | None = None,
        flags: tuple[str, ...] = (),
    ) -> None:
        self.layer = layer
        self.label: str = _LABELS[layer] if isinstance(layer, Layer) else layer
        self.source = source
        self.text = text
        self.unit = unit  # the rendered text: formatted, escaped, without the final newline
        self.pinned = pinned
        self.role = role
        self.score = score
        self.flags = flags
        self.status = FragmentStatus.KEPT
        self.reason = ""
        self.tokens = 0
        self.cost = 0  # tokens plus what this fragment alone adds to the prompt
        self.kept = True
        self.wrapped = False  # a thread message rendered inside a data block

    def fragment(self) -> Fragment:
        return Fragment(
            self.layer,
            self.source,
            self.text,
            self.tokens,
            self.pinned,
            self.flags,
            self.status,
            self.reason,
            self.role,
            self.score,
        )


_LABELS = {layer: layer.label for layer in Layer}


@dataclass(slots=True)
class _Details:
    """What the manifest and fragments are made from, built when first asked for."""

    parts: list[_Part]
    created_at: datetime
    agent: Agent
    model: str | None
    encoding: str
    budget: int
    memory_on: bool
    temporary: bool
    guard_ms: float = 0.0
    fragments: tuple[Fragment, ...] | None = None
    manifest: Manifest | None = None


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The result of one assembly. ``messages`` and ``tokens`` are ready at once; ``fragments`` and ``manifest``
    are built on first access (typically after the model call, off the critical path)."""

    context_id: str
    messages: tuple[r.ChatMessage, ...]
    tokens: int
    remember: bool  # False: memory off or temporary chat; no long-term read or write for this turn
    persist: bool  # False: temporary chat; store nothing of this turn
    _details: _Details = field(repr=False, compare=False)

    @property
    def fragments(self) -> tuple[Fragment, ...]:
        d = self._details
        if d.fragments is None:
            d.fragments = tuple(part.fragment() for part in d.parts)
        return d.fragments

    @property
    def manifest(self) -> Manifest:
        d = self._details
        if d.manifest is None:
            d.manifest = Manifest(
                context_id=self.context_id,
                created_at=d.created_at,
                agent=d.agent.name,
                fingerprint=d.agent.fingerprint,
                model=d.model,
                encoding=d.encoding,
                budget_tokens=d.budget,
                tokens=self.tokens,
                memory_enabled=d.memory_on,
                temporary=d.temporary,
                entries=tuple(
                    ManifestEntry(p.label, p.source, p.tokens, p.status, p.flags, p.reason, _seen(p)) for p in d.parts
                ),
            )
        return d.manifest

    @property
    def guard_ms(self) -> float:
        """Milliseconds the content guard took in this assembly (a turn's ``guard`` stage)."""
        return self._details.guard_ms

    def message_dicts(self) -> list[dict[str, str]]:
        return [m.to_dict() for m in self.messages]


def _seen(part: _Part) -> str:
    """A part's text as its manifest keeps it: what the model saw, or, quarantined, its shape only. The session
    layer's is not kept at all: session metadata (a location, a device) is never stored (DESIGN §2)."""
    if part.layer is Layer.SESSION:
        return ""
    return withhold(part.text) if part.status is FragmentStatus.QUARANTINED else part.text


def assemble(
    request: ContextRequest, *, stack: LayerStack = DEFAULT_STACK, guard: ContentGuard | None = None
) -> AssembledContext:
    """Build the context for one model call. Raises ``OverrideViolation`` (tampered agent, broken structure),
    ``BudgetExceeded`` (the untrimmable layers do not fit) or ``InputError`` (no message).

    ``guard``: the content check (default: the phrase rules, no model). A
    :class:`~memstack.guard.semantic.SemanticGuard` embeds the data-layer texts it has not seen yet, in one batch:
    from async code, run the assembly in a thread or ``await guard.prepare(texts)`` first."""
    if not request.message or not request.message.strip():
        raise InputError("the current message is empty; send the user's message as text")
    agent = request.agent
    model = request.model or agent.model.name
    budget = request.budget_tokens if request.budget_tokens is not None else agent.budget_tokens
    if budget < 1:
        raise InputError(f"budget_tokens must be at least 1, got {budget}")
    memory_on = request.memory_enabled and agent.memory.enabled and not request.temporary
    session = request.session if request.session is not None else build_session(None)

    parts = _parts(request, agent, session, memory_on, stack)
    specs = check_structure(parts, agent, stack)
    guarding = time.perf_counter()
    verdicts = content_verdicts([(s, p.text, p.role, p.source) for p, s in zip(parts, specs, strict=True)], guard=guard)
    guard_ms = (time.perf_counter() - guarding) * 1000
    for part, verdict in zip(parts, verdicts, strict=True):
        if verdict is not None:
            found, action = verdict
            part.flags = tuple(dict.fromkeys((*part.flags, *found)))
            part.reason = verdict_reason(found, action)
            if action == OnFlag.QUARANTINE.value:
                part.status, part.kept, part.pinned = FragmentStatus.QUARANTINED, False, False

    counter = CachedCounter(model)
    key = r.new_key()
    tags = _Tags(counter, key)
    _count(parts, counter, tags, key, agent)
    block_flags = _block_flags(parts, specs)
    section_cost, shared = _section_costs(stack, counter, tags, key, block_flags)
    slots = [Slot(p.label, p.cost, p.pinned, p.kept) for p in parts]
    total = fit_budget(
        slots,
        budget=budget,
        fixed=_MESSAGE_OVERHEAD + _REPLY_PRIMING,
        section_cost=section_cost,
        shared_cost=shared,
        stack=stack,
    )
    for part, slot, spec in zip(parts, slots, specs, strict=True):
        if part.kept and not slot.kept:
            part.kept, part.status = False, FragmentStatus.TRIMMED
            part.reason = f"trimmed to fit the token budget ({part.label}: {spec.trim.value.replace('_', ' ')})"
    context_id = request.context_id or new_id("ctx")
    details = _Details(
        parts, datetime.now(UTC), agent, model, counter.encoding, budget, memory_on, request.temporary, guard_ms
    )
    return AssembledContext(
        context_id=context_id,
        messages=_render(parts, specs, key, stack, block_flags),
        tokens=total,
        remember=memory_on,
        persist=not request.temporary,
        _details=details,
    )


# --- 1. fragments --------------------------------------------------------------------------------------------------


def _parts(req: ContextRequest, agent: Agent, session: SessionMeta, memory_on: bool, stack: LayerStack) -> list[_Part]:
    out: list[_Part] = []
    for spec in stack:
        builtin = spec.builtin
        if builtin is None:
            pinned = spec.trim is Trim.NEVER
            for i, text in enumerate(req.extra.get(spec.key, ())):
                if text.strip():
                    unit = r.plain_line(r.escape_data(r.neutralize_links(text)))
                    out.append(_Part(spec.key, f"{spec.source_prefix}{i}", text.strip(), unit, pinned=pinned))
        elif builtin is Layer.CORE or builtin is Layer.CHARACTERISTICS:
            source, text = authority_text(agent)[spec.key]
            if text:
                out.append(_Part(builtin, source, text, text, pinned=True))
        elif builtin is Layer.SESSION:
            text = render_session(session, memory_enabled=memory_on, temporary=req.temporary)
            flags = (*session.notes, *(("memory_off",) if not memory_on else ()), *(("temporary",) * req.temporary))
            out.append(_Part(Layer.SESSION, "session", text, text, pinned=True, flags=flags))
            for name, line in client_lines(session):  # the client's own words: data the guard reads
                said = line.partition(": ")[2]  # the guard judges the client's words, not memstack's label
                out.append(_Part(Layer.SESSION, f"session:{name}", said, r.escape_data(line), pinned=True))
        elif builtin is Layer.DELEGATED and req.delegated is not None:
            out.extend(_delegated(req.delegated))
        elif builtin is Layer.FACTS:
            hard = [f for f in req.facts if f.hard_exception]
            soft = sorted((f for f in req.facts if not f.hard_exception), key=lambda f: f.since_turn)
            for i, fact in enumerate((*hard, *soft)):
                if fact.text.strip():
                    unit = r.fact_line(fact.text, fact.hard_exception)
                    out.append(_Part(Layer.FACTS, f"fact:{i}", fact.text.strip(), unit, pinned=fact.hard_exception))
        elif builtin is Layer.MEMORY and memory_on:
            weight: dict[str | None, float] = {c.value: w for c, w in agent.memory.category_weights}
            ranked = sorted(req.memories, key=lambda h: h.score * weight.get(h.category, 1.0), reverse=True)
            for h in ranked:
                if h.content.strip():
                    unit = r.memory_line(h.content, h.category, h.held)
                    out.append(_Part(Layer.MEMORY, f"memory:{h.id}", h.content.strip(), unit, score=h.score))
        elif builtin is Layer.SUMMARIES and memory_on:
            for s in sorted(req.summaries, key=_oldest_first):
                if s.text.strip():
                    unit = r.summary_line(s.text, s.at.date().isoformat() if s.at else None)
                    out.append(_Part(Layer.SUMMARIES, f"summary:{s.id}", s.text.strip(), unit))
        elif builtin is Layer.TURN_LOG:
            for t in sorted(req.turn_log, key=lambda t: t.turn):
                text = turn_log_text(t)
                out.append(_Part(Layer.TURN_LOG, f"turn:{t.turn}", text, r.turn_line(t)))
        elif builtin is Layer.THREAD:
            out.extend(_thread(req.thread))
        elif builtin is Layer.CURRENT:
            text = req.message.strip()
            out.append(_Part(Layer.CURRENT, "message:current", text, text, pinned=True, role="user"))
    return out


def turn_log_text(turn: TurnSummary) -> str:
    """What the content guard reads of a turn-log entry (layer 8)."""
    return f"User: {turn.user_summary} | You: {turn.assistant_summary}"


def _oldest_first(summary: SummaryLine) -> datetime:
    """Dated summaries in time order (naive times read as UTC); undated ones keep their place at the end."""
    at = summary.at
    if at is None:
        return datetime.max.replace(tzinfo=UTC)
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _delegated(task: DelegatedTask) -> list[_Part]:
    out: list[_Part] = []
    for name in ("instructions", "payload", "output_schema"):
        value = getattr(task, name)
        if value is None or value == "":
            continue
        raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        out.append(_Part(Layer.DELEGATED, f"delegated:{name}", raw.strip(), r.delegated_line(name, raw), pinned=True))
    return out


def _thread(thread: Sequence[RawMessage]) -> list[_Part]:
    messages = [m for m in thread if m.content.strip()]
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=len(messages) - 1)
    return [
        _Part(
            Layer.THREAD,
            f"thread:{i}:{m.role}",
            m.content.strip(),
            r.chat_body(m.content if m.role in ("user", "assistant") else r.neutralize_links(m.content)),
            pinned=i >= last_user,
            role=m.role,
        )
        for i, m in enumerate(messages)
    ]


# --- 3. budget -----------------------------------------------------------------------------------------------------


def _thread_open(part: _Part, key: str) -> str:
    origin = "" if part.role in ("user", "assistant") else f"{part.role}, not the user"
    return r.open_tag(Layer.THREAD.label, key, flags=part.flags, origin=origin)


class _Tags:
    """Token counts of block tags. Keys are digits, so a tag costs the same whatever its key: count it once with a
    placeholder key and cache it."""

    def __init__(self, counter: CachedCounter, key: str) -> None:
        self._counter = counter
        self._key = key

    def count(self, tag: str) -> int:
        return self._counter.count(tag.replace(self._key, r.PLACEHOLDER_KEY))


def _count(parts: list[_Part], counter: CachedCounter, tags: _Tags, key: str, agent: Agent) -> None:
    """Count every part's rendered unit, apply the memory top_k, and set what each costs the budget."""
    top_k, keep_top = agent.memory.top_k, agent.memory.keep_top
    ranked = 0
    close = r.close_tag(key).rstrip("\n")
    for part in parts:
        layer = part.layer
        if layer is Layer.THREAD or layer is Layer.CURRENT:
            # Tool output, other roles and flagged messages go inside a data block; the user's and the
            # assistant's own words are plain chat messages.
            part.wrapped = layer is Layer.THREAD and (part.role not in ("user", "assistant") or bool(part.flags))
            if part.wrapped:
                part.tokens = counter.count_line(part.unit)
                wrapper = tags.count(_thread_open(part, key)) + tags.count(close)
            else:
                part.tokens, wrapper = counter.count(part.unit), 0
            part.cost = part.tokens + wrapper + _MESSAGE_OVERHEAD
        else:
            part.tokens = part.cost = counter.count_line(part.unit)
        if layer is Layer.MEMORY and part.kept:
            ranked += 1
            part.pinned = ranked <= keep_top
            if ranked > top_k:
                part.kept, part.status = False, FragmentStatus.TRIMMED
                part.reason = f"ranked below the agent's top_k ({top_k})"


def _block_flags(parts: Sequence[_Part], specs: Sequence[LayerSpec]) -> dict[str, tuple[str, ...]]:
    """The ``flagged`` attribute of each system data block: the guard's flags of the neutralized text it holds (not
    the session's notes, such as ``timezone_missing``, which say nothing about instructions)."""
    out: dict[str, tuple[str, ...]] = {}
    for part, spec in zip(parts, specs, strict=True):
        found = tuple(flag for flag in part.flags if flag in FLAGS)
        if found and part.kept and spec.data and spec.placement is Placement.SYSTEM:
            out[spec.key] = tuple(dict.fromkeys((*out.get(spec.key, ()), *found)))
    return out


def _section_costs(
    stack: LayerStack, counter: CachedCounter, tags: _Tags, key: str, block_flags: Mapping[str, tuple[str, ...]]
) -> tuple[dict[str, int], tuple[frozenset[str], int]]:
    costs: dict[str, int] = {}
    data_layers: set[str] = set()
    for spec in stack:
        if spec.placement is not Placement.SYSTEM:
            continue
        cost = counter.count(r.section_header(spec))
        if spec.data:
            data_layers.add(spec.key)
            cost += tags.count(r.open_tag(spec.key, key, flags=block_flags.get(spec.key, ())))
            cost += tags.count(r.close_tag(key))
        costs[spec.key] = cost
    return costs, (frozenset(data_layers), counter.count(r.DATA_PREAMBLE))


# --- 4. rendering --------------------------------------------------------------------------------------------------


def _render(
    parts: Sequence[_Part],
    specs: Sequence[LayerSpec],
    key: str,
    stack: LayerStack,
    block_flags: Mapping[str, tuple[str, ...]],
) -> tuple[r.ChatMessage, ...]:
    by_layer: dict[str, list[str]] = {}
    chat: list[r.ChatMessage] = []
    close = r.close_tag(key).rstrip("\n")
    for part, spec in zip(parts, specs, strict=True):
        if not part.kept:
            continue
        if spec.placement is Placement.CHAT:
            if part.wrapped:
                role = "assistant" if part.role == "assistant" else "user"
                chat.append(r.ChatMessage(role, f"{_thread_open(part, key)}{part.unit}\n{close}"))
            else:
                chat.append(r.ChatMessage(part.role or "user", part.unit))
        else:
            by_layer.setdefault(part.label, []).append(part.unit)
    lines: list[str] = []
    preamble = False
    for spec in stack:
        units = by_layer.get(spec.key)
        if not units:
            continue
        if spec.data and not preamble:
            lines.append(r.DATA_PREAMBLE)
            preamble = True
        lines.append(r.section_header(spec))
        if spec.data:
            lines.append(r.open_tag(spec.key, key, flags=block_flags.get(spec.key, ())))
        lines.extend(unit + "\n" for unit in units)
        if spec.data:
            lines.append(r.close_tag(key))
    return (r.ChatMessage("system", "".join(lines)), *chat)
