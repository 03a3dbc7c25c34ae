"""Layered context assembly: one :class:`ContextRequest` in, one :class:`AssembledContext` out.

Pure and fast: no I/O, no model or embedding calls. Steps, in order:

1. fragments for every layer of the stack, from the request's plain values;
2. :func:`~memstack.context.guard.validate_no_override` (structure raises, content is neutralized or quarantined);
3. token counts (cached per rendered unit) and the trim policy (:mod:`memstack.context.budget`);
4. rendering (:mod:`memstack.context.render`) and the manifest.

Modes: ``memory_enabled=False`` leaves layers 6-7 empty and marks the result ``remember=False`` (no long-term read
or write) while the session layer keeps working; ``temporary=True`` additionally marks ``persist=False``: the engine
stores nothing of the turn, not even the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from memstack.context import render as r
from memstack.context.agent import Agent, default_agent
from memstack.context.budget import CachedCounter, Slot, fit_budget
from memstack.context.guard import validate_no_override
from memstack.context.manifest import Manifest, ManifestEntry
from memstack.context.session_meta import SessionMeta, build_session, render_session
from memstack.context.stack import DEFAULT_STACK, LayerSpec, LayerStack, Placement, Trim
from memstack.errors import InputError
from memstack.types import Fact, Fragment, FragmentStatus, Layer, RawMessage, ScoredMemory, TurnSummary, new_id

__all__ = ["AssembledContext", "ContextRequest", "DelegatedTask", "MemoryHit", "SummaryLine", "assemble"]

_MESSAGE_OVERHEAD = 3  # tokens the chat format adds per message (role and separators)
_REPLY_PRIMING = 3  # tokens that prime the reply


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """A retrieved long-term memory: id, text, category and retrieval score."""

    id: str
    content: str
    category: str | None = None
    score: float = 0.0

    @classmethod
    def from_scored(cls, hit: ScoredMemory) -> MemoryHit:
        m = hit.memory
        return cls(m.id, m.content, m.category.value, hit.score)


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


@dataclass(frozen=True, slots=True)
class AssembledContext:
    context_id: str
    messages: tuple[r.ChatMessage, ...]
    fragments: tuple[Fragment, ...]
    manifest: Manifest
    tokens: int
    remember: bool  # False: memory off or temporary chat; no long-term read or write for this turn
    persist: bool  # False: temporary chat; store nothing of this turn

    def message_dicts(self) -> list[dict[str, str]]:
        return [m.to_dict() for m in self.messages]


def assemble(request: ContextRequest, *, stack: LayerStack = DEFAULT_STACK) -> AssembledContext:
    """Build the context for one model call. Raises ``OverrideViolation`` (tampered agent, broken structure),
    ``BudgetExceeded`` (the untrimmable layers do not fit) or ``InputError`` (no message)."""
    if not request.message or not request.message.strip():
        raise InputError("the current message is empty; send the user's message as text")
    agent = request.agent
    model = request.model or agent.model.name
    budget = request.budget_tokens if request.budget_tokens is not None else agent.budget_tokens
    if budget < 1:
        raise InputError(f"budget_tokens must be at least 1, got {budget}")
    memory_on = request.memory_enabled and agent.memory.enabled and not request.temporary
    session = request.session if request.session is not None else build_session(None)

    drafts = _fragments(request, agent, session, memory_on, stack)
    fragments = list(validate_no_override([d for d, _ in drafts], agent, stack=stack))
    units = [u for _, u in drafts]

    counter = CachedCounter(model)
    key = r.new_key()
    slots, fragments = _slots(fragments, units, counter, key, stack, agent)
    block_flags = _block_flags(fragments, stack)
    section_cost, shared = _section_costs(stack, counter, key, block_flags)
    total = fit_budget(
        slots,
        budget=budget,
        fixed=_MESSAGE_OVERHEAD + _REPLY_PRIMING,
        section_cost=section_cost,
        shared_cost=shared,
        stack=stack,
    )
    final = [_settle(f, s, stack) for f, s in zip(fragments, slots, strict=True)]
    messages = _render(final, units, key, stack, block_flags)
    context_id = request.context_id or new_id("ctx")
    manifest = Manifest(
        context_id=context_id,
        created_at=datetime.now(UTC),
        agent=agent.name,
        fingerprint=agent.fingerprint,
        model=model,
        encoding=counter.encoding,
        budget_tokens=budget,
        tokens=total,
        memory_enabled=memory_on,
        temporary=request.temporary,
        entries=tuple(ManifestEntry(f.label, f.source, f.tokens, f.status, f.flags, f.reason) for f in final),
    )
    return AssembledContext(
        context_id=context_id,
        messages=messages,
        fragments=tuple(final),
        manifest=manifest,
        tokens=total,
        remember=memory_on,
        persist=not request.temporary,
    )


# --- 1. fragments --------------------------------------------------------------------------------------------------

_Draft = tuple[Fragment, str]  # the fragment (raw text) and its rendered unit (formatted, escaped, no newline)


def _fragments(
    req: ContextRequest, agent: Agent, session: SessionMeta, memory_on: bool, stack: LayerStack
) -> list[_Draft]:
    out: list[_Draft] = []
    for spec in stack:
        builtin = spec.builtin
        if builtin is None:
            out.extend(_extra(spec, req.extra.get(spec.key, ())))
        elif builtin is Layer.CORE:
            text = r.render_core(agent)
            out.append((Fragment(Layer.CORE, f"agent:{agent.name}#core", text, pinned=True), text))
        elif builtin is Layer.CHARACTERISTICS:
            text = r.render_characteristics(agent)
            if text:
                source = f"agent:{agent.name}#characteristics"
                out.append((Fragment(Layer.CHARACTERISTICS, source, text, pinned=True), text))
        elif builtin is Layer.SESSION:
            text = render_session(session, memory_enabled=memory_on, temporary=req.temporary)
            flags = (*session.notes, *(("memory_off",) if not memory_on else ()), *(("temporary",) * req.temporary))
            out.append((Fragment(Layer.SESSION, "session", text, pinned=True, flags=flags), text))
        elif builtin is Layer.DELEGATED and req.delegated is not None:
            out.extend(_delegated(req.delegated))
        elif builtin is Layer.FACTS:
            out.extend(_facts(req.facts))
        elif builtin is Layer.MEMORY and memory_on:
            out.extend(_memories(req.memories, agent))
        elif builtin is Layer.SUMMARIES and memory_on:
            out.extend(
                (Fragment(Layer.SUMMARIES, f"summary:{s.id}", s.text), r.summary_line(s.text, _date(s.at)))
                for s in req.summaries
                if s.text.strip()
            )
        elif builtin is Layer.TURN_LOG:
            for t in sorted(req.turn_log, key=lambda t: t.turn):
                text = f"User: {t.user_summary} | You: {t.assistant_summary}"
                out.append((Fragment(Layer.TURN_LOG, f"turn:{t.turn}", text), r.turn_line(t)))
        elif builtin is Layer.THREAD:
            out.extend(_thread(req.thread))
        elif builtin is Layer.CURRENT:
            text = req.message.strip()
            out.append((Fragment(Layer.CURRENT, "message:current", text, pinned=True, role="user"), text))
    return out


def _date(at: datetime | None) -> str | None:
    return at.date().isoformat() if at else None


def _extra(spec: LayerSpec, texts: Sequence[str]) -> list[_Draft]:
    pinned = spec.trim is Trim.NEVER
    return [
        (Fragment(spec.key, f"{spec.source_prefix}{i}", t.strip(), pinned=pinned), r.plain_line(r.escape_data(t)))
        for i, t in enumerate(texts)
        if t.strip()
    ]


def _delegated(task: DelegatedTask) -> list[_Draft]:
    out: list[_Draft] = []
    for name in ("instructions", "payload", "output_schema"):
        value = getattr(task, name)
        if value is None or value == "":
            continue
        line = r.delegated_line(name, value)
        raw = value if isinstance(value, str) else line.split(": ", 1)[1]
        out.append((Fragment(Layer.DELEGATED, f"delegated:{name}", raw, pinned=True), line))
    return out


def _facts(facts: Sequence[Fact]) -> list[_Draft]:
    hard = [f for f in facts if f.hard_exception]
    soft = sorted((f for f in facts if not f.hard_exception), key=lambda f: f.since_turn)
    out: list[_Draft] = []
    for i, fact in enumerate((*hard, *soft)):
        if fact.text.strip():
            fragment = Fragment(Layer.FACTS, f"fact:{i}", fact.text.strip(), pinned=fact.hard_exception)
            out.append((fragment, r.fact_line(fact)))
    return out


def _memories(hits: Sequence[MemoryHit], agent: Agent) -> list[_Draft]:
    settings = agent.memory
    ranked = sorted(
        (h for h in hits if h.content.strip()),
        key=lambda h: h.score * settings.weight(h.category),
        reverse=True,
    )
    out: list[_Draft] = []
    for h in ranked:
        fragment = Fragment(Layer.MEMORY, f"memory:{h.id}", h.content.strip(), score=h.score)
        out.append((fragment, r.memory_line(h.content, h.category)))
    return out


def _thread(thread: Sequence[RawMessage]) -> list[_Draft]:
    messages = [m for m in thread if m.content.strip()]
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=len(messages) - 1)
    return [
        (
            Fragment(Layer.THREAD, f"thread:{i}:{m.role}", m.content.strip(), pinned=i >= last_user, role=m.role),
            r.chat_body(m.content),
        )
        for i, m in enumerate(messages)
    ]


# --- 3. budget ------------------------------------------------------------------------------------------------------


def _wrapped(fragment: Fragment) -> bool:
    """Thread messages that are not the user's or the assistant's own words (tool output), or that were flagged,
    go inside a data block."""
    return fragment.layer is Layer.THREAD and (fragment.role not in ("user", "assistant") or bool(fragment.flags))


def _thread_open(fragment: Fragment, key: str) -> str:
    origin = "" if fragment.role in ("user", "assistant") else f"{fragment.role}, not the user"
    return r.open_tag(Layer.THREAD.label, key, flags=fragment.flags, origin=origin)


def _slots(
    fragments: list[Fragment], units: list[str], counter: CachedCounter, key: str, stack: LayerStack, agent: Agent
) -> tuple[list[Slot], list[Fragment]]:
    """Count every fragment (its rendered unit), apply the memory top_k, and describe each to the budget."""
    top_k, keep_top = agent.memory.top_k, agent.memory.keep_top
    slots: list[Slot] = []
    counted: list[Fragment] = []
    ranked = 0
    close = r.close_tag(key).rstrip("\n")
    for fragment, unit in zip(fragments, units, strict=True):
        spec = stack.get(fragment.label)
        if spec.placement is Placement.CHAT:
            if _wrapped(fragment):
                tokens = counter.count(unit + "\n")
                extra = counter.count_uncached(_thread_open(fragment, key)) + counter.count_uncached(close)
            else:
                tokens, extra = counter.count(unit), 0
            cost = tokens + extra + _MESSAGE_OVERHEAD
        else:
            tokens = cost = counter.count(unit + "\n")
        kept = fragment.status is not FragmentStatus.QUARANTINED
        pinned, status, reason = fragment.pinned, fragment.status, fragment.reason
        if fragment.layer is Layer.MEMORY and kept:
            ranked += 1
            pinned = ranked <= keep_top
            if ranked > top_k:
                kept, status, reason = False, FragmentStatus.TRIMMED, f"ranked below the agent's top_k ({top_k})"
        slots.append(Slot(fragment.label, cost, pinned, kept))
        counted.append(_replace(fragment, tokens=tokens, pinned=pinned, status=status, reason=reason))
    return slots, counted


def _block_flags(fragments: Sequence[Fragment], stack: LayerStack) -> dict[str, tuple[str, ...]]:
    """The ``flagged`` attribute of each system data block: flags of the neutralized text it holds."""
    out: dict[str, tuple[str, ...]] = {}
    for f in fragments:
        if f.flags and f.status is not FragmentStatus.QUARANTINED:
            spec = stack.get(f.label)
            if spec.data and spec.placement is Placement.SYSTEM:
                out[spec.key] = tuple(dict.fromkeys((*out.get(spec.key, ()), *f.flags)))
    return out


def _section_costs(
    stack: LayerStack, counter: CachedCounter, key: str, block_flags: Mapping[str, tuple[str, ...]]
) -> tuple[dict[str, int], tuple[frozenset[str], int]]:
    costs: dict[str, int] = {}
    data_layers: set[str] = set()
    for spec in stack:
        if spec.placement is not Placement.SYSTEM:
            continue
        cost = counter.count(r.section_header(spec))
        if spec.data:
            data_layers.add(spec.key)
            cost += counter.count_uncached(r.open_tag(spec.key, key, flags=block_flags.get(spec.key, ())))
            cost += counter.count_uncached(r.close_tag(key))
        costs[spec.key] = cost
    return costs, (frozenset(data_layers), counter.count(r.DATA_PREAMBLE))


def _settle(fragment: Fragment, slot: Slot, stack: LayerStack) -> Fragment:
    if slot.kept or fragment.status is not FragmentStatus.KEPT:
        return fragment
    rule = stack.get(fragment.label).trim.value.replace("_", " ")
    reason = f"trimmed to fit the token budget ({fragment.label}: {rule})"
    return _replace(fragment, status=FragmentStatus.TRIMMED, reason=reason)


def _replace(fragment: Fragment, **changes: Any) -> Fragment:
    values = {name: getattr(fragment, name) for name in Fragment.__dataclass_fields__}
    values.update(changes)
    return Fragment(**values)


# --- 4. rendering --------------------------------------------------------------------------------------------------


def _render(
    fragments: Sequence[Fragment],
    units: Sequence[str],
    key: str,
    stack: LayerStack,
    block_flags: Mapping[str, tuple[str, ...]],
) -> tuple[r.ChatMessage, ...]:
    by_layer: dict[str, list[str]] = {}
    chat: list[r.ChatMessage] = []
    close = r.close_tag(key).rstrip("\n")
    for fragment, unit in zip(fragments, units, strict=True):
        if fragment.status is not FragmentStatus.KEPT:
            continue
        if stack.get(fragment.label).placement is Placement.CHAT:
            if _wrapped(fragment):
                content = f"{_thread_open(fragment, key)}{unit}\n{close}"
                role = "assistant" if fragment.role == "assistant" else "user"
            else:
                content, role = unit, fragment.role or "user"
            chat.append(r.ChatMessage(role, content))
        else:
            by_layer.setdefault(fragment.label, []).append(unit)
    parts: list[str] = []
    preamble = False
    for spec in stack:
        lines = by_layer.get(spec.key)
        if not lines:
            continue
        if spec.data and not preamble:
            parts.append(r.DATA_PREAMBLE)
            preamble = True
        parts.append(r.section_header(spec))
        if spec.data:
            parts.append(r.open_tag(spec.key, key, flags=block_flags.get(spec.key, ())))
        parts.extend(line + "\n" for line in lines)
        if spec.data:
            parts.append(r.close_tag(key))
    return (r.ChatMessage("system", "".join(parts)), *chat)
