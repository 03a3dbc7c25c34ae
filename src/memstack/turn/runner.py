"""One chat turn, end to end (DESIGN §1), as an async stream of events.

::

    detection task starts at once (memory on, not temporary)        ── runs in parallel ──┐
    wait for the session lock (the previous turn's phase 2)                               │
    embed the message once → recall memories and past messages (layer 6), summaries (7)  │
    assemble the context (layers 1-10, budget, validate_no_override, manifest)            │
    phase 1: chat model call, streamed or not, tool calls executed and fed back           │
    race detection against badge_wait_s ◀──────────────────────────────────────────────────┘
      meanwhile: commit the raw exchange (SessionService.record_turn, fenced by the lease)
    reply: ChatDone(ChatResult(reply, memory_updates, context_id, session_id, …))
    phase 2 in the background, still under the session lock (SessionService.finish_turn)

The reply (``ChatDone``: the JSON answer, or a stream's ``done`` event) is an acknowledgement, and it is sent only
once the raw exchange is committed and the detection's job recorded: a crash after it loses nothing, since phase 2,
detection and the archive's vectors resume from what was recorded. Nothing on the critical path waits for work it
does not need: detection only joins at the badge race (and keeps running, and saving, when it loses); phase 2
starts after the reply. A turn that fails before replying (the model, or the record: ``LeaseLost`` when another
process took the session over) releases the session lock (``abort_turn``) and acknowledges nothing; its detection
still completes, since the user did say the message.

A turn is erasure-fenced (:mod:`memstack.store.fence`): before it reads anything of the user it pins the user's
erasure epoch, and every write of the turn and of the work it leaves running (detection, the manifest, phase 2, its
retries) is refused once the user has been erased since (``UserErased``): an erasure during a turn leaves nothing of
it. The fence is set around each step of the turn's event stream rather than across the stream (a stream may be
read from several tasks), and the tasks a step starts inherit it. Per-process copies of the turn's data (the recent
exchanges, the message's vector) are keyed by the epoch too, so a turn of the same user id after an erasure never
reads them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from memstack.capture.base import ClassifyContext
from memstack.capture.pipeline import CapturePipeline, DetectionResult
from memstack.capture.scoring import MemoryScorer
from memstack.config import TierLimits
from memstack.context import (
    Agent,
    AssembledContext,
    ContextRequest,
    DelegatedTask,
    MemoryHit,
    SessionMeta,
    SummaryLine,
    assemble,
    turn_log_text,
)
from memstack.embed import Embedder
from memstack.embed.batching import BatchingEmbedder
from memstack.errors import InputError, MemstackError, NotFound
from memstack.guard import ContentGuard, SemanticGuard
from memstack.models import ChatModel, Message
from memstack.observe import Account, Ledger, Telemetry, accounting, current_account, role, tracing
from memstack.recall import ExchangeText, Recaller, TurnVectorizer, layer_hits
from memstack.recall.layers import EXCERPT_PREFIX
from memstack.session.service import SessionService, TurnHandle
from memstack.store import Store
from memstack.store.fence import NEVER_ERASED, Fence, fenced, pin
from memstack.store.fence import current as current_fence
from memstack.tokens import TokenCounter
from memstack.turn.admission import DEFAULT_ACTIVE_TURNS, FairGate
from memstack.turn.background import Background
from memstack.turn.inputs import TurnLimits, check_message, delegated_task, session_meta
from memstack.turn.phase1 import ModelParams, Phase1Done, ToolBox, ToolSupport, run_phase1
from memstack.turn.timings import Stopwatch
from memstack.types import (
    ChatDone,
    ChatEvent,
    ChatResult,
    FragmentStatus,
    Layer,
    Manifest,
    RawMessage,
    RecallItem,
    RecallKind,
    TokenUsage,
    UserRef,
    Vector,
    new_id,
    utcnow,
)

__all__ = ["TurnParts", "TurnRequest", "TurnRunner", "TurnSettings"]

log = logging.getLogger("memstack.turn")


@dataclass(frozen=True, slots=True)
class TurnSettings:
    """``badge_wait_s``: how long the reply waits for detection (the badge race). ``summaries``: past-session lines
    offered to layer 7. ``max_tool_rounds``: model calls that may ask for tools before it must answer.
    ``resume_every_s``: how often an open engine looks for work that another process left behind when it died
    (pending detections, turns without their phase 2); ``0`` only at open. ``active_turns``: pieces of turn work
    (preparing a model call, phase 2, memory detection) that run at once; the rest wait their turn, tenants in
    rotation (:mod:`memstack.turn.admission`). ``tenant_turns``: how many of those one tenant may hold (default
    three quarters), so that a flooding tenant leaves room for the others' work."""

    badge_wait_s: float = 3.0
    resume_every_s: float = 30.0
    active_turns: int = DEFAULT_ACTIVE_TURNS
    tenant_turns: int | None = None
    summaries: int = 5
    max_tool_rounds: int = 4
    model_timeout_s: float | None = None
    limits: TurnLimits = field(default_factory=TurnLimits)


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One checked chat call (made by :meth:`TurnRunner.prepare`). ``at``: when the message was received (the
    engine's clock: what the session records). ``capture``: the message is the user's (off in a delegated run,
    whose message is a fixed request to carry out the task): detection reads it and the session keeps it. Off, the
    model still gets it as the current message, but the exchange is kept with no user message (only the reply), so
    it is never recalled, summarized or shown back to the model as something the user said.

    Detection reads the message at ``meta.local_time``, the time the client says the user wrote it, in the user's
    zone (the server's time when the client sends none): "tomorrow" is the user's tomorrow, the day the model is
    told it is (layer 3), and a message sent with an earlier local time (an import, a replay, an evaluation) is
    dated when it was written."""

    user: UserRef
    message: str
    agent: Agent
    meta: SessionMeta
    at: datetime
    session_id: str | None = None
    memory: bool = True
    temporary: bool = False
    delegated: DelegatedTask | None = None
    capture: bool = True


class RecentExchanges:
    """The last exchanges of recently active sessions, in memory: what the memory classifier reads as context
    (the assistant's question turns a bare "five years already!" into a fact). Detection starts before the
    session lock, so it does not wait to read the session; this copy saves the read. When it has nothing for a
    session the caller names (after a restart, or once evicted), the turn reads the session's stored raw window
    instead (:meth:`TurnRunner.detection_context`), and the detection job's payload carries what was read, so a
    resumed detection classifies with the same context. Bounded: at most ``sessions`` sessions and ``max_chars``
    characters of text in all (messages may be 32,000 characters long), least recently used evicted first."""

    def __init__(self, sessions: int = 10_000, keep: int = 4, max_chars: int = 4_000_000) -> None:
        self._sessions = sessions
        self._keep = keep
        self._max_chars = max_chars
        self._chars = 0
        self._recent: OrderedDict[_RecentKey, tuple[tuple[str, str], ...]] = OrderedDict()

    def get(self, user: UserRef, session_id: str) -> tuple[tuple[str, str], ...]:
        return self._recent.get(_key(user, session_id), ())

    def forget(self, user: UserRef) -> None:
        """Drop every session of ``user`` (the user was erased)."""
        for key in [k for k in self._recent if k[:2] == (user.tenant, user.user_id)]:
            self._chars -= _chars(self._recent.pop(key))

    def add(self, user: UserRef, session_id: str, message: str, reply: str) -> None:
        """One exchange; a blank side (no reply: the offline responder; no user message: a delegated run) is left
        out."""
        key = _key(user, session_id)
        said = tuple((role, text) for role, text in (("user", message), ("assistant", reply)) if text.strip())
        self._put(key, (*self._recent.get(key, ()), *said))

    def load(self, user: UserRef, session_id: str, window: Sequence[RawMessage]) -> tuple[tuple[str, str], ...]:
        """Fill the copy of a session from its stored raw window; what the classifier will read."""
        pairs = tuple((m.role, m.content) for m in window if m.role in ("user", "assistant") and m.content.strip())
        return self._put(_key(user, session_id), pairs)

    def _put(self, key: _RecentKey, pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        self._chars -= _chars(self._recent.pop(key, ()))
        self._recent[key] = pairs = pairs[-self._keep :]
        self._chars += _chars(pairs)
        while len(self._recent) > self._sessions or (self._chars > self._max_chars and len(self._recent) > 1):
            self._chars -= _chars(self._recent.popitem(last=False)[1])
        return pairs


def _chars(pairs: tuple[tuple[str, str], ...]) -> int:
    return sum(len(text) for _, text in pairs)


#: (tenant, user, session, erasure epoch of the running turn's fence).
_RecentKey = tuple[str, str, str, int]


def _epoch() -> int:
    """The erasure epoch the running work pinned (that of a user never erased when it runs under no fence)."""
    fence = current_fence()
    return fence.epoch if fence is not None and fence.epoch is not None else NEVER_ERASED


def _key(user: UserRef, session_id: str) -> _RecentKey:
    return (user.tenant, user.user_id, session_id, _epoch())


@dataclass(slots=True)
class TurnParts:
    """What a turn uses, owned by the engine."""

    store: Store
    embedder: Embedder
    pipeline: CapturePipeline
    sessions: SessionService
    scorer: MemoryScorer
    recaller: Recaller | None
    vectorizer: TurnVectorizer | None
    background: Background
    admission: FairGate
    chat_model: Callable[[Agent], ChatModel]
    tools: Callable[[UserRef, Agent, str | None], ToolBox | None]
    tiers: TierLimits
    settings: TurnSettings = field(default_factory=TurnSettings)
    clock: Callable[[], datetime] = utcnow
    recent: RecentExchanges = field(default_factory=RecentExchanges)
    tool_support: ToolSupport = field(default_factory=ToolSupport)
    guard: ContentGuard | None = (
        None  # None: the phrase rules; a semantic guard embeds new texts: assembled in a thread
    )
    telemetry: Telemetry = field(default_factory=Telemetry)  # model calls, turns and background work reported


#: Message vectors kept from retrieval until phase 2 stores them as the archived message's vector.
_KEEP_VECTORS = 1024


class TurnRunner:
    def __init__(self, parts: TurnParts) -> None:
        self.parts = parts
        self._vectors: OrderedDict[tuple[str, str, str, int, int], Vector] = OrderedDict()
        self._pins: dict[tuple[str, str], asyncio.Future[Fence]] = {}  # epoch reads in flight, by user

    def forget(self, user: UserRef) -> None:
        """Drop what this process keeps of ``user`` between turns (the user was erased)."""
        self.parts.recent.forget(user)
        for key in [k for k in self._vectors if k[:2] == (user.tenant, user.user_id)]:
            del self._vectors[key]

    def prepare(
        self,
        user: UserRef,
        message: str,
        agent: Agent,
        *,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | SessionMeta | None = None,
        memory: bool = True,
        temporary: bool = False,
        delegated: DelegatedTask | Mapping[str, Any] | str | None = None,
        capture: bool = True,
    ) -> TurnRequest:
        """Check a chat call before any work starts; ``InputError`` says what to fix (empty or oversized message,
        unknown time zone or tier, bad delegated task)."""
        p = self.parts
        check_message(message, p.settings.limits)
        now = p.clock()
        meta = session_meta(metadata, tenant=user.tenant, now=now)
        p.tiers.limit_for(meta.tier)
        if session_id is not None and not (0 < len(session_id) <= 200 and session_id.isprintable()):
            raise InputError("session_id must be 1-200 printable characters; omit it to start a new session")
        task = delegated_task(delegated, p.settings.limits)
        return TurnRequest(user, message, agent, meta, now, session_id, memory, temporary, task, capture)

    async def detection_context(self, req: TurnRequest) -> tuple[tuple[str, str], ...]:
        """The session's last exchanges for the memory classifier: this process's copy, else (a session named by the
        caller that this process has not seen: after a restart, or evicted) the session's stored raw window."""
        p = self.parts
        if req.session_id is None:
            return ()
        recent = p.recent.get(req.user, req.session_id)
        if recent:
            return recent
        try:
            state = await p.store.sessions.open(req.user, req.session_id, create=False, window_turns=2)
        except NotFound:  # a new session under a name the caller chose
            return ()
        return p.recent.load(req.user, req.session_id, state.raw_window)

    async def run(self, req: TurnRequest, *, stream: bool) -> AsyncGenerator[ChatEvent, None]:
        """Token and tool events (tokens only when ``stream``), then one ``ChatDone``; every step under the turn's
        erasure fence (pinned first: a temporary chat writes nothing and needs none).

        Every step also runs under the turn's account (:mod:`memstack.observe.accounting`: its model calls, and
        those of the work it starts, are the user's, and the ones made before the reply are in its ``usage``) and
        as the ``chat`` role; the turn's span (:mod:`memstack.observe.tracing`, when traces are on) is ended with
        its stages once the reply is ready."""
        fence = None if req.temporary else await self._pin(req.user)
        span = tracing.start_turn(
            tenant=req.user.tenant, agent=req.agent.name, session=req.session_id, temporary=req.temporary
        )
        telemetry = self.parts.telemetry
        account = Account(telemetry, req.user.tenant, req.user.user_id, Ledger(), tracing.context_of(span))
        steps = self._run(req, stream=stream)
        try:
            while True:
                with fenced(fence), accounting(account), role("chat"):
                    try:
                        event = await anext(steps)
                    except StopAsyncIteration:
                        return
                    except BaseException as exc:
                        tracing.finish_turn(span, error=exc)
                        span = None
                        raise
                if isinstance(event, ChatDone) and event.result.manifest is not None:
                    timings = event.result.manifest.timings
                    if timings is not None:
                        telemetry.turn(req.user.tenant, timings)
                    if span is not None:
                        span.set_attribute("memstack.session", event.result.session_id)
                        span.set_attribute("memstack.turn", event.result.turn)
                        span.set_attribute("memstack.model", event.result.model)
                    tracing.finish_turn(span, timings)
                    span = None
                yield event
        finally:
            tracing.finish_turn(span)  # the caller stopped reading before the reply
            await steps.aclose()

    async def _pin(self, user: UserRef) -> Fence:
        """The turn's fence (:func:`memstack.store.fence.pin`). Turns of a user that start while a read of their
        epoch is in flight share it, and resume in the order they asked: the turns of a session reach its lock in
        the order they arrived (a pin read each could finish in any order on a pool of connections). A shared read
        began before the later turns did: pinning earlier is always safe."""
        outer = current_fence()
        if outer is not None and outer.user == user and outer.epoch is not None:  # part of a larger piece of work
            return outer
        key = (user.tenant, user.user_id)
        shared = self._pins.get(key)
        if shared is None:
            shared = self._pins[key] = asyncio.ensure_future(pin(self.parts.store.users, user))
            shared.add_done_callback(lambda done: self._pins.pop(key, None) if self._pins.get(key) is done else None)
        return await asyncio.shield(shared)

    async def _run(self, req: TurnRequest, *, stream: bool) -> AsyncGenerator[ChatEvent, None]:
        p = self.parts
        clock = Stopwatch()  # the turn's stages (TurnTimings, on the manifest it returns)
        now, meta = req.at, req.meta
        remember = req.memory and req.agent.memory.enabled and not req.temporary
        session_id = req.session_id or new_id("ses")
        detection = None
        if remember and req.capture:
            recent = ClassifyContext(recent=await self.detection_context(req))
            detection = p.pipeline.start(
                req.user,
                req.message,
                at=meta.local_time,
                tier=meta.tier,
                session_id=session_id,
                agent_id=None,
                context=recent,
            )
            tracing.track(detection, "memstack.detection", session=session_id)
        handle = await p.sessions.begin_turn(req.user, session_id, agent=req.agent.name, temporary=req.temporary)
        clock.lap("session")
        replied = False
        saving: asyncio.Future[bool] | None = None
        try:
            model = p.chat_model(req.agent)
            async with p.admission.slot(req.user.tenant):  # the work before the model call: one slot, not while waiting
                clock.lap("queue")
                request = await self._context_request(req, handle, remember, model.name, clock)
                if p.guard is None:
                    context = assemble(request)
                else:  # the semantic layer embeds texts it has not seen: off the event loop
                    context = await asyncio.to_thread(assemble, request, guard=p.guard)
                clock.lap("assemble")
                clock.carve("assemble", "guard", context.guard_ms)
            saving = None if req.temporary else asyncio.ensure_future(self._save_manifest(req, handle, context))
            messages = [Message.from_openai(m.to_dict()) for m in context.messages]
            done: Phase1Done | None = None
            params = ModelParams(
                req.agent.model.temperature,
                req.agent.model.max_output_tokens,
                p.settings.model_timeout_s,
                p.settings.max_tool_rounds,
            )
            tools = p.tools(req.user, req.agent, meta.tier) if remember else None
            phase1 = run_phase1(model, messages, tools, params, stream=stream, support=p.tool_support)
            async for event in phase1:
                if isinstance(event, Phase1Done):
                    done = event
                else:
                    yield event
            assert done is not None  # run_phase1 always ends with it
            clock.lap("model")
            kept = "" if done.placeholder else done.text  # a stand-in reply is not conversation: no reply is kept
            said = req.message if req.capture else ""  # a delegated run's request is not the user's words
            record = clock.until("write", p.sessions.record_turn(handle, said, kept, at=now))
            if detection is not None:  # the badge race, the record and the detection's own record, together
                found, _, _ = await asyncio.gather(
                    p.pipeline.race(detection, p.settings.badge_wait_s), record, p.pipeline.recorded(detection)
                )
            else:
                found = None
                await record
            clock.lap_at("write", clock.ends["write"])
            clock.lap("detection")  # what the reply waited for detection after the write
            stored = await saving if saving is not None else False
            clock.lap("write")
            if not req.temporary:
                p.recent.add(req.user, handle.session_id, said, kept)
            phase2 = self._phase2(handle, said, kept)
            p.background.spawn(phase2, name=f"phase2:{handle.session_id}:{handle.turn}")
            manifest = replace(context.manifest, timings=clock.timings())
            replied = True
        finally:
            if not replied:
                if saving is not None and not saving.done():
                    saving.cancel()
                await p.sessions.abort_turn(handle)
        yield ChatDone(self._result(req, handle, done, detection, found, manifest, remember, stored))

    async def _save_manifest(self, req: TurnRequest, handle: TurnHandle, context: AssembledContext) -> bool:
        """Keep what the model saw (``memstack context explain``); built and written while the model answers. A
        failure to store it does not fail the turn: the reply then carries no context id."""
        try:
            await self.parts.store.contexts.save(req.user, context.manifest, session_id=handle.session_id)
        except MemstackError as exc:
            log.warning("context %s not stored: %s: %s", context.context_id, type(exc).__name__, exc)
            return False
        return True

    async def _context_request(
        self, req: TurnRequest, handle: TurnHandle, remember: bool, model: str, clock: Stopwatch
    ) -> ContextRequest:
        """Everything assembly needs; ``model`` picks the tokenizer family of the budget."""
        memories: tuple[MemoryHit, ...] = ()
        summaries: tuple[SummaryLine, ...] = ()
        if remember:  # layer 7 is read while the message is embedded and layer 6 recalled
            memories, summaries = await asyncio.gather(self._memories(req, handle, clock), self._summaries(req, handle))
            clock.lap("recall")
        state = handle.state
        return ContextRequest(
            message=req.message,
            agent=req.agent,
            session=req.meta,
            delegated=req.delegated,
            facts=state.base_truth,
            memories=memories,
            summaries=summaries,
            turn_log=state.turn_log,
            thread=state.raw_window,
            model=req.agent.model.name or model,
            memory_enabled=req.memory,
            temporary=req.temporary,
        )

    async def _memories(self, req: TurnRequest, handle: TurnHandle, clock: Stopwatch) -> tuple[MemoryHit, ...]:
        """Layer 6: memories (vector + full text, expired ones dropped, schedules decayed) and excerpts of the
        user's past conversations, recalled together (:mod:`memstack.recall`); this session's own messages are in
        layers 8-9, so they are left out. The agent's category weights are applied by the assembly. Past versions
        of superseded memories come too, below the current ones, each saying when it held ("until March 2026"), so
        the model can answer "where did I live before?"."""
        p = self.parts
        vector = (await p.embedder.embed([req.message]))[0]  # the one embedding of the message in a turn
        clock.lap("embed")
        if p.vectorizer is not None and not handle.temporary:  # phase 2 stores it as the archived message's
            self._vectors[(req.user.tenant, req.user.user_id, handle.session_id, handle.turn, _epoch())] = vector
            while len(self._vectors) > _KEEP_VECTORS:
                self._vectors.popitem(last=False)
        top = req.agent.memory.top_k
        if top <= 0:
            return ()
        if p.recaller is None:
            hits = await p.scorer.recall(
                req.user, req.message, vector, k=top, agent_id=req.agent.name, now=req.at, with_past=True
            )
            return tuple(MemoryHit.from_scored(h, req.at) for h in hits)
        generation = p.embedder.generation if isinstance(p.embedder, BatchingEmbedder) else 0
        items = await p.recaller.recall(
            req.user, req.message, k=top, at=req.at, vector=vector, exclude_session=handle.session_id,
            agent_id=req.agent.name, with_past=True,
        )  # fmt: skip
        if isinstance(p.guard, SemanticGuard) and isinstance(p.embedder, BatchingEmbedder):
            await self._share_vectors(req.user, items, p.guard, p.embedder, generation)
        return layer_hits(items, now=req.at)

    async def _share_vectors(
        self, user: UserRef, items: Sequence[RecallItem], guard: SemanticGuard, embedder: BatchingEmbedder, since: int
    ) -> None:
        """The guard reads each recalled memory: the stored vectors of those it has not read yet (those the search
        brought, else one read of the rest) spare it embedding their texts again."""
        held = {item.text.strip(): item.vector for item in items if item.vector is not None}
        unread = {
            item.id: item.text.strip()
            for item in items
            if item.kind is RecallKind.MEMORY and item.vector is None and not guard.knows(item.text.strip())
        }
        if unread:
            stored = await self.parts.store.vectors.stored(user, list(unread))
            held.update((unread[memory_id], vector) for memory_id, vector in stored.items() if memory_id in unread)
        if held:
            embedder.known(list(held), np.stack(list(held.values())), generation=since)

    async def _summaries(self, req: TurnRequest, handle: TurnHandle) -> tuple[SummaryLine, ...]:
        """Layer 7: one line per recent past session of the user (not this one)."""
        p = self.parts
        if p.settings.summaries <= 0:
            return ()
        lines = await p.sessions.recent_summaries(req.user, p.settings.summaries, exclude=handle.session_id)
        return tuple(SummaryLine(s.session_id, s.line, s.ended_at or s.updated_at) for s in lines if s.line)

    async def _phase2(self, handle: TurnHandle, message: str, reply: str) -> None:
        p = self.parts
        async with p.admission.slot(handle.user.tenant):
            with tracing.span("memstack.phase2", session=handle.session_id, turn=handle.turn):
                try:
                    done = await p.sessions.finish_turn(handle)  # recorded before the reply
                except BaseException:
                    await p.sessions.abort_turn(handle)
                    raise
                if isinstance(p.guard, SemanticGuard):  # the next turn's assembly finds these verdicts cached
                    texts = [turn_log_text(done.summary), *(fact.text.strip() for fact in done.base_truth)]
                    await p.guard.prepare(texts)
                if p.vectorizer is not None and not handle.temporary:  # after the lock: what recall finds from now on
                    key = (handle.user.tenant, handle.user.user_id, handle.session_id, handle.turn, _epoch())
                    known = self._vectors.pop(key, None)
                    exchange = ExchangeText(handle.session_id, handle.turn, message, reply)
                    known_vectors = {message: known} if known is not None and message else None
                    await p.vectorizer.embed(handle.user, [exchange], known=known_vectors)

    def _result(
        self,
        req: TurnRequest,
        handle: TurnHandle,
        done: Phase1Done,
        detection: Any,
        found: DetectionResult | None,
        manifest: Manifest,
        remember: bool,
        stored: bool,
    ) -> ChatResult:
        used = tuple(
            e.source.removeprefix("memory:")
            for e in manifest.entries
            if e.layer == Layer.MEMORY.label
            and e.status is FragmentStatus.KEPT
            and not e.source.startswith(f"memory:{EXCERPT_PREFIX}")
        )
        updates = (*(found.updates if found is not None else ()), *(u for use in done.tool_uses for u in use.updates))
        prompts = [found.upgrade_prompt if found is not None else None, *(use.upgrade_prompt for use in done.tool_uses)]
        return ChatResult(
            session_id=handle.session_id,
            reply=done.text,
            turn=handle.turn,
            memory_updates=updates,
            context_id=manifest.context_id if stored else None,
            upgrade_prompt=next((prompt for prompt in prompts if prompt), None),
            memory_pending=detection is not None and found is None,
            memories_refused=tuple(q.content for q in found.quarantined) if found is not None else (),
            memories_used=used,
            tool_uses=done.tool_uses,
            model=done.model,
            offline=done.placeholder,
            memory_enabled=remember,
            temporary=req.temporary,
            usage=_usage(done, manifest),
            manifest=manifest,
        )


def _usage(done: Phase1Done, manifest: Manifest) -> TokenUsage:
    """What the model reported, or (when it reported nothing) memstack's count of the context and the reply; with
    the turn's model calls so far by role (its account's ledger) and the chat model's estimated cost."""
    account = current_account()
    roles = account.ledger.usage() if account is not None and account.ledger is not None else ()
    chat = [r for r in roles if r.role == "chat"]
    cost = None
    if chat and all(r.cost_usd is not None for r in chat):
        cost = sum(r.cost_usd or 0.0 for r in chat)
    if done.usage is not None and done.usage.total_tokens > 0:
        return TokenUsage(done.usage.prompt_tokens, done.usage.completion_tokens, cost_usd=cost, roles=roles)
    counted = TokenCounter(manifest.model).count(done.text)  # no reported tokens to price: no cost
    return TokenUsage(manifest.tokens, counted, estimated=True, roles=roles)
