"""The engine: :class:`AsyncMemstack` (the async core) and :class:`Memstack` (its thin blocking wrapper).

``AsyncMemstack`` opens what the configuration names (``Config.resolve(**settings)``: the embedder of
``config.embedder``, the store of ``config.database_url``, the chat, classifier and summarizer models) and

- answers chat turns with memory: :meth:`~AsyncMemstack.chat`, :meth:`~AsyncMemstack.chat_stream` and
  :meth:`~AsyncMemstack.delegate` (the turn itself lives in :mod:`memstack.turn`);
- manages a user's long-term memories: add, get, list, search, edit, forget (one, or all a query is about, with a
  preview), restore, delete, history, tier usage (methods of its own, written in :mod:`memstack.engine._memories`);
- hands over or erases everything held about a user (data access and deletion requests): :meth:`~AsyncMemstack.export`,
  :meth:`~AsyncMemstack.export_stream` (the document of :mod:`memstack.users`) and :meth:`~AsyncMemstack.erase`;
- reads back what the interfaces show, in namespaces of their own: ``sessions`` (a user's sessions, their memory,
  turns, archive search), ``agents`` (stored agent definitions per tenant), ``contexts`` (what the model saw for
  each response), ``keys`` (API keys), ``users`` (a user's records, the erasure fence), ``webhooks`` (a tenant's
  endpoints and their deliveries, sent by a worker every resuming engine runs: ``docs/webhooks.md``), and for
  servers built on the engine ``answers`` (idempotency) and ``threads`` (OpenAI-style histories). The HTTP server,
  its web UI, the CLI and MCP use only the engine (``tests/test_engine_door.py``);
- recalls what a user said before, memories and archived conversations ranked together: :meth:`~AsyncMemstack.recall`;
  imports past conversations without a chat model: :meth:`~AsyncMemstack.ingest` (both in :mod:`memstack.recall`).

Users are named by id (tenant ``default``) or by a :class:`~memstack.types.UserRef`. Closing drains background work
(detections, phase 2 of turns); opening resumes what a previous process left pending.

A configured model that cannot be built (``classifier_model = openai:…`` without ``$OPENAI_API_KEY``) does not stop
the engine from opening: memory management needs no model. The chat parts are left closed (the reason is logged,
work left pending stays pending in the store), and every chat call (``chat``, ``chat_stream``, ``delegate``,
``end_session``, ``register_agent``) raises the :class:`~memstack.errors.ConfigError` that names the setting and the
variable to set, until the configuration is fixed; the chat parts open at the first call that can build them.

``Memstack`` (:mod:`memstack.blocking`) runs the same coroutines on a private event-loop thread; each of its methods
is one line naming the coroutine it runs, so the two APIs cannot drift apart.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from contextlib import aclosing
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from memstack.config import Config, setting
from memstack.embed import Embedder, get_embedder
from memstack.embed.batching import BatchingEmbedder
from memstack.engine._agents import Agents
from memstack.engine._contexts import Contexts
from memstack.engine._keys import Keys
from memstack.engine._memories import MemoryManagement
from memstack.engine._renamed import renamed
from memstack.engine._requests import KeptAnswers, Threads
from memstack.engine._scope import user_ref as _user
from memstack.engine._sessions import Sessions
from memstack.engine._users import Users
from memstack.engine._webhooks import Webhooks
from memstack.errors import ConfigError, InputError
from memstack.observe import Account, Telemetry, accounting, configure
from memstack.store import Store, open_store
from memstack.store.fence import Fence, fenced, pin
from memstack.turn.models import Models, Tuning, check_models
from memstack.types import ChatEvent, ChatResult, ErasureReport, ImportReport, UserRef, check_text
from memstack.types._core import check_limit, check_min_score
from memstack.webhooks.worker import DeliveryWorker, Policy

if TYPE_CHECKING:
    from memstack.context import Agent, DelegatedTask, SessionMeta
    from memstack.recall import IngestMessage
    from memstack.turn.runner import TurnRequest
    from memstack.turn.turns import Turns
    from memstack.types import IngestResult, RecallItem, RecallKind, SessionSummary

__all__ = [
    "Agents",
    "AsyncMemstack",
    "Contexts",
    "KeptAnswers",
    "Keys",
    "Models",
    "Sessions",
    "Threads",
    "Tuning",
    "Users",
    "Webhooks",
]

log = logging.getLogger("memstack")

#: Seconds a graceful shutdown waits for background work (detections, phase 2 of turns) before cancelling it.
DRAIN_TIMEOUT_S = 30.0

#: What a delegated run sends as the current message: the task itself stays in layer 4.
DELEGATED_MESSAGE = "Carry out the delegated task described in your context and answer in its output format."


class AsyncMemstack(MemoryManagement):
    """Long-term memory management, async. Use as ``async with AsyncMemstack(home=...) as ms:``.

    Settings are those of :class:`~memstack.config.Config` (``home``, ``database_url``, ``embedder``, ``tiers``…),
    falling back to ``MEMSTACK_*`` environment variables; or pass a ready ``config``. ``models``: ready-made chat,
    classifier or summarizer models instead of the configured ones; ``tuning``: settings of the turn's parts.
    ``resume=False`` leaves work a previous process left pending alone (tools that only inspect or manage data);
    ``warm=False`` leaves what a chat turn reads to load on its first use (:mod:`memstack.turn.warm`: about 2 s of a
    process's first ``open``), for a short-lived engine that only manages data."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        models: Models | None = None,
        tuning: Tuning | None = None,
        resume: bool = True,
        warm: bool = True,
        **settings: Any,
    ) -> None:
        if config is not None and settings:
            raise ConfigError("pass either a Config or settings, not both")
        self._given = config
        self._settings = settings
        self._models = models or Models()
        self._tuning = tuning or Tuning()
        self._resume = resume
        self._warm = warm
        self._config: Config | None = None
        self._embedder: Embedder | None = None
        self._store: Store | None = None
        self._turns: Turns | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # where the engine was opened: background work runs there
        self._telemetry = Telemetry()  # model calls, turns and background work counted (memstack.observe)
        # What the interfaces need besides memories and chat, as namespaces (engine/_*.py): every interface (HTTP,
        # web UI, CLI, MCP) reaches memstack's data through the engine, never through the store.
        self.sessions = Sessions(self)
        self.agents = Agents(self)
        self.contexts = Contexts(self)
        self.keys = Keys(self)
        self.users = Users(self)
        self.answers = KeptAnswers(self)
        self.threads = Threads(self)
        self.webhooks = Webhooks(self)
        self._deliveries: DeliveryWorker | None = None  # the webhook delivery worker (memstack.webhooks.worker)

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Resolve the configuration, load the embedder, open (creating, migrating) the store, set up the chat
        turn's parts and load what they read (:mod:`memstack.turn.warm`: the first turn pays for none of it), and
        start resuming the work a previous process left pending (in the background)."""
        if self._store is not None:
            return
        config = self._given or Config.resolve(**self._settings)
        configure(self._telemetry, config)  # prices (ConfigError when malformed), traces when configured
        try:
            loaded = get_embedder(config.embedder)
        except ConfigError as exc:
            raise ConfigError(
                f"the embedder {config.embedder!r} ({setting('embedder')}) cannot be used: {exc}"
            ) from None
        embedder = BatchingEmbedder(loaded)  # concurrent turns share embedding batches
        store = await open_store(config, dim=embedder.dim, embedder=embedder.name)
        self._store, self._config, self._embedder = store, config, embedder
        self._loop = asyncio.get_running_loop()
        if self._resume:  # deliveries a previous process left pending are resumed like the rest of its work
            self._webhook_worker().start()
        try:
            check_models(config, self._models)
        except ConfigError as exc:  # a model that cannot be built: memory management still works
            log.warning("memstack opened without chat (chat calls raise this until it is fixed): %s", exc)
            return
        try:
            turns = self._open_chat()
            from memstack.turn.warm import warm  # loads the models: not on the import path of the CLI

            if self._warm:
                await warm(turns)
        except BaseException:
            if self._deliveries is not None:
                await self._deliveries.aclose()
            self._store = self._embedder = self._config = self._deliveries = None
            await store.close()
            await embedder.aclose()
            raise

    def _open_chat(self) -> Turns:
        """The chat parts (capture pipeline, session service, models); ``ConfigError`` when a configured model
        cannot be built. Resumes pending work when they open."""
        from memstack.turn.turns import Turns

        assert self._store is not None and self._config is not None and self._embedder is not None
        turns = Turns(self._config, self._store, self._embedder, self._models, self._tuning, self._telemetry)
        self._turns = turns
        if self._resume:
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # opened late by a blocking call from the caller's thread (Memstack.register_agent)
                assert self._loop is not None
                self._loop.call_soon_threadsafe(turns.resume)
            else:
                turns.resume()
        return turns

    async def aclose(self, *, drain_timeout_s: float = DRAIN_TIMEOUT_S) -> None:
        """Graceful shutdown: wait (up to ``drain_timeout_s``) for background work, then close everything."""
        turns, store, embedder, deliveries = self._turns, self._store, self._embedder, self._deliveries
        self._turns = self._deliveries = None
        try:
            if deliveries is not None:
                await deliveries.aclose()
            if turns is not None:
                await turns.aclose(drain_timeout_s)
        finally:
            self._store = self._embedder = None
            if store is not None:
                await store.close()
            if embedder is not None:
                await embedder.aclose()

    async def wait_idle(self, timeout_s: float = DRAIN_TIMEOUT_S) -> bool:
        """Wait until the background work of earlier turns is done (phase 2, memory detections, work resumed at
        open); True when it finished within ``timeout_s``. Nothing is cancelled: the engine stays usable."""
        if self._turns is None:  # not open, or the chat parts never opened: nothing runs in the background
            if self._store is None:
                raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
            return True
        return await self._turns.wait_idle(timeout_s)

    def _webhook_worker(self) -> DeliveryWorker:
        """This engine's webhook delivery worker (made, not started, on first use)."""
        if self._deliveries is None:
            webhooks = self.webhooks
            self._deliveries = DeliveryWorker(
                self.store.webhooks, Policy.of(self.config), lambda: webhooks.allow_private
            )
        return self._deliveries

    def _wake_webhooks(self) -> None:
        """A delivery was made due now (a replay): the worker looks at once rather than at its next poll."""
        if self._deliveries is not None:
            self._deliveries.wake()

    @property
    def chat_model_name(self) -> str:
        """The chat model of agents that name none (``offline:responder`` when none is configured)."""
        return self._chat().chat_models.default.name

    @property
    def telemetry(self) -> Telemetry:
        """Where this engine reports its model calls (tokens, cost), turns and background work, with the usage sums
        per user and tenant (:mod:`memstack.observe`); a server adds its Prometheus metrics as a listener."""
        return self._telemetry

    @property
    def is_open(self) -> bool:
        return self._store is not None

    @property
    def config(self) -> Config:
        if self._config is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._config

    @property
    def store(self) -> Store:
        if self._store is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._store

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._embedder

    def _chat(self) -> Turns:
        """The chat parts, opened now if they could not be at open (``ConfigError`` saying what to set)."""
        if self._store is None:
            raise ConfigError("memstack is not open; use `async with AsyncMemstack(...) as ms:` or await ms.open()")
        return self._turns if self._turns is not None else self._open_chat()

    # -- chat turns -------------------------------------------------------------------------------------------------

    async def chat(
        self,
        user_id: str | UserRef,
        message: str,
        *,
        session_id: str | None = None,
        new_session: bool = False,
        tenant: str | None = None,
        metadata: Mapping[str, Any] | SessionMeta | None = None,
        agent: str | Agent | None = None,
        memory: bool = True,
        temporary: bool = False,
        delegated: DelegatedTask | Mapping[str, Any] | str | None = None,
    ) -> ChatResult:
        """Answer one message with memory (DESIGN §1): the reply, the memory badge, the context id, the session id.

        Which session: ``session_id`` names one (a session of that name is started when there is none). Without
        it the chat **continues the user's current session**, their most recently active one with this agent,
        unless it has ended (:meth:`end_session`; :meth:`Sessions.current <memstack.engine.Sessions.current>` says
        which it is), as a chat app's conversation goes on; ``new_session=True`` starts a new one instead. The
        result's ``session_id`` says which was used. A temporary chat without ``session_id`` is always a new one.

        ``metadata``: the client's session fields (``timezone``, ``local_time``, ``user_agent``, ``location``,
        ``tier``, ``coins``, ``flags``), never stored. ``agent``: an :class:`~memstack.context.Agent`, a registered
        name or a YAML path. ``memory=False``: no long-term read or write. ``temporary=True``: nothing about the
        turn is stored. ``delegated``: a task spec from a parent agent (``instructions``, ``payload``,
        ``output_schema``): layer 4."""
        turns = self._chat()
        req = turns.prepare(_user(user_id, tenant), message, agent, session_id, metadata, memory, temporary, delegated)
        if self._continues(session_id, new_session, temporary):
            req = await self._in_current_session(req)
        return await turns.answer(req)

    def chat_stream(
        self,
        user_id: str | UserRef,
        message: str,
        *,
        session_id: str | None = None,
        new_session: bool = False,
        tenant: str | None = None,
        metadata: Mapping[str, Any] | SessionMeta | None = None,
        agent: str | Agent | None = None,
        memory: bool = True,
        temporary: bool = False,
        delegated: DelegatedTask | Mapping[str, Any] | str | None = None,
    ) -> AsyncGenerator[ChatEvent, None]:
        """:meth:`chat`, streamed: ``ChatToken`` events as the model writes, ``ChatToolEvent`` when it uses a tool,
        then one ``ChatDone`` with the whole result (the same session rule). Bad arguments raise before the first
        event. Close the iterator (``contextlib.aclosing``) when stopping early: that releases the session."""
        turns = self._chat()
        req = turns.prepare(_user(user_id, tenant), message, agent, session_id, metadata, memory, temporary, delegated)
        if self._continues(session_id, new_session, temporary):
            return self._stream_in_current_session(turns, req)
        return turns.run(req, stream=True)

    @staticmethod
    def _continues(session_id: str | None, new_session: bool, temporary: bool) -> bool:
        """Whether a chat continues the user's current session (see :meth:`chat`)."""
        if new_session and session_id is not None:
            raise InputError("pass session_id (that session) or new_session=True (a new one), not both")
        return session_id is None and not new_session and not temporary

    async def _in_current_session(self, req: TurnRequest) -> TurnRequest:
        current = await self.sessions.current(req.user, agent=req.agent.name)
        return req if current is None else replace(req, session_id=current.session_id)

    async def _stream_in_current_session(self, turns: Turns, req: TurnRequest) -> AsyncGenerator[ChatEvent, None]:
        events = turns.run(await self._in_current_session(req), stream=True)
        async with aclosing(events):
            async for event in events:
                yield event

    async def delegate(
        self,
        parent: str | Agent,
        child: str | Agent | None,
        task: DelegatedTask | Mapping[str, Any] | str,
        *,
        user_id: str | UserRef,
        tenant: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | SessionMeta | None = None,
        memory: bool = True,
        temporary: bool = False,
    ) -> ChatResult:
        """Hand ``child`` a task from ``parent`` on behalf of a user. The task spec (``instructions``, ``payload``,
        ``output_schema``) is the child's layer 4: data it works on, never its rules (its core and hard constraints
        still hold, and text in the task that tries to take authority is flagged). The current message is a fixed
        request to carry out the task, so nothing of the payload is captured as a memory of the user."""
        from memstack.context import DelegatedTask

        turns = self._chat()
        user = _user(user_id, tenant)
        req = turns.prepare(
            user, DELEGATED_MESSAGE, child, session_id, metadata, memory, temporary, task, capture=False
        )
        spec = req.delegated
        if spec is None:  # pragma: no cover - delegated_task never returns None for a given task
            raise InputError("a delegated run needs a task")
        parent_name = parent if isinstance(parent, str) else parent.name
        spec = DelegatedTask(spec.instructions, spec.payload, spec.output_schema, spec.parent or parent_name)
        return await turns.answer(replace(req, delegated=spec))

    async def end_session(
        self, user_id: str | UserRef, session_id: str, *, tenant: str | None = None
    ) -> SessionSummary | None:
        """Close a session and write its one-line summary, which later sessions of the user see (layer 7)."""
        sessions, ref = self._chat().sessions, _user(user_id, tenant)
        with fenced(await self._pin(ref)):
            return await sessions.end_session(ref, session_id)

    def register_agent(self, agent: Agent | str | Path) -> Agent:
        """Make an agent available by name to :meth:`chat` (an :class:`~memstack.context.Agent` or a YAML path)."""
        from memstack.context import Agent, load_agent

        turns = self._chat()
        return turns.agents.register(agent if isinstance(agent, Agent) else load_agent(agent))

    # -- recall and import -------------------------------------------------------------------------------------------

    @renamed(k="limit")
    async def recall(
        self, user_id: str | UserRef, query: str, *, limit: int = 10, at: datetime | None = None,
        kinds: Iterable[RecallKind | str] | None = None, exclude_session: str | None = None,
        agent_id: str | None = None, min_score: float | None = None, as_of: datetime | None = None,
        tenant: str | None = None,
    ) -> builtins.list[RecallItem]:  # fmt: skip
        """The ``limit`` items best matching ``query`` among the user's long-term memories and archived messages,
        best first (lexical + vector, time expressions in the query read against ``at``, default now; category
        weights and recency). ``kinds``: ``memory``, ``turn`` or both (default); ``exclude_session``: leave out one
        session's messages. Each item says where it comes from (``source_turn_ids``: ``session_id:turn``).

        ``score`` is a ranking score, 0 or more, for ordering the items of one call (not a similarity, and it can
        pass 1): a memory's is its cosine similarity plus a lexical bonus, times its category's weight; a message's
        its lexical plus vector score. ``min_score`` leaves out items below it, so fewer than ``limit`` (or none)
        may come back. ``as_of``: the memories that held at that time (superseded past versions included), weighed
        as at that time; ``at`` defaults to it."""
        check_text(query, "the recall query")
        check_limit(limit)
        floor = check_min_score(min_score, low=0.0, high=None)
        items = await self._chat().recaller.recall(
            _user(user_id, tenant), query, k=limit, at=at, kinds=None if kinds is None else tuple(kinds),
            exclude_session=exclude_session, agent_id=agent_id, as_of=as_of,
        )  # fmt: skip
        return items if floor is None else [item for item in items if item.score >= floor]

    async def ingest(
        self, user_id: str | UserRef, session_id: str, messages: Iterable[Mapping[str, Any] | IngestMessage], *,
        user_speaker: str | None = None, agent: str | None = None, capture: bool = True, tier: str | None = None,
        end: bool = True, tenant: str | None = None,
    ) -> IngestResult:  # fmt: skip
        """Import a past conversation into session ``session_id`` without calling a chat model: ``messages`` are
        ``{"role": "user"|"assistant" or "speaker": NAME, "content": ..., "at": datetime or ISO time}`` in order
        (``user_speaker`` names the user when speakers are named). Each exchange is archived at its own time and
        summarized as in phase 2 of a turn, memory capture runs on the user's messages (``capture``, with the
        user's ``tier``), every message is embedded for :meth:`recall`, and with ``end`` the session is closed
        with its cross-session line. Importing into an existing session appends to it, except what it has archived
        already (the same side, text and time): importing twice changes nothing (:mod:`memstack.recall.ingest`)."""
        ingestor, ref = self._chat().ingestor, _user(user_id, tenant)
        with fenced(await self._pin(ref)), accounting(Account(self._telemetry, ref.tenant, ref.user_id)):
            return await ingestor.ingest(
                ref, session_id, messages, user_speaker=user_speaker, agent=agent, capture=capture, tier=tier,
                end=end,
            )  # fmt: skip

    # -- a user as a whole: data access and erasure ------------------------------------------------------------------

    @renamed(user="user_id")
    def export_stream(self, user_id: str | UserRef, *, tenant: str | None = None) -> AsyncIterator[str]:
        """Everything held about the user as pieces of one JSON document (:mod:`memstack.users`), read from the
        store a page at a time: write them out as they come (a large user is never held in memory at once)."""
        from memstack.users import export_document

        ref = _user(user_id, tenant)
        return export_document(ref, self.store.users.export(ref))

    @renamed(user="user_id")
    async def export(self, user_id: str | UserRef, *, tenant: str | None = None) -> dict[str, Any]:
        """The export document of :meth:`export_stream`, parsed (for users small enough to hold in memory)."""
        text = "".join([piece async for piece in self.export_stream(user_id, tenant=tenant)])
        document: dict[str, Any] = json.loads(text)
        return document

    async def import_user(
        self, document: str | bytes | Mapping[str, Any], *, tenant: str | None = None, max_bytes: int | None = None
    ) -> ImportReport:
        """Import a user from their export document (:meth:`export`'s, as text or parsed) in one store transaction,
        keeping ids, history, times and sessions: an export of the imported user gives the same document. The
        document is checked first (its version, its shape, its ``sha256``: ``ImportRefused`` for one cut short,
        changed or of an unknown version; at most ``max_bytes``, 256 MiB by default). It is imported into its own
        tenant (``tenant``, when given, must be it). Importing a document the store holds already changes nothing
        (``unchanged``); a user holding other data, or ids another user holds, is ``ImportConflict`` (erase the
        user first to replace them). Nothing is written by a refused import (:mod:`memstack.engine._imports`)."""
        from memstack.engine._imports import import_document
        from memstack.imports import MAX_IMPORT_BYTES

        limit = MAX_IMPORT_BYTES if max_bytes is None else max_bytes
        return await import_document(self, document, tenant=tenant, max_bytes=limit)

    @renamed(user="user_id")
    async def erase(self, user_id: str | UserRef, *, tenant: str | None = None) -> ErasureReport:
        """Remove everything held about the user in their tenant, in one store transaction (memories and their
        history, sessions with turn log, archive and vectors, stored contexts, background jobs, session leases,
        kept HTTP responses), then this process's caches of them (and those it keeps of every user's texts at
        once: the vectors of texts embedded in the last minute, the guard's verdicts); returns the rows removed per
        table.

        The erasure is a fence (:mod:`memstack.store.fence`): work for the user that began before its commit (an
        import, a chat turn, the background work turns leave: detection, phase 2 and its retries, the cross-session
        lines; here or in any process sharing the store) writes nothing after it: its writes are refused with
        ``UserErased`` and roll back, what it wrote before went with the erasure, and its pending jobs are gone
        (never resumed). Work that begins after the erasure returned writes data of a new user of that id. On
        SQLite the erased text is gone from every file of the store when this returns (the write-ahead log and the
        full-text indexes included). Afterwards the user looks like one never seen."""
        ref = _user(user_id, tenant)
        report = await self.store.users.erase(ref)
        self._telemetry.usage.forget(ref)
        if isinstance(self._embedder, BatchingEmbedder):
            self._embedder.forget_recent()  # vectors of texts embedded moments ago, every user's at once
        if self._turns is not None:
            self._turns.forget(ref)
        return report

    async def _pin(self, user: UserRef) -> Fence:
        """The fence of work for ``user`` that starts now (:func:`memstack.store.fence.pin`)."""
        return await pin(self.store.users, user)
