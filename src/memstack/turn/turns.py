"""Everything chat turns need besides the store, built when the engine opens and closed when it closes.

:class:`Turns` owns the capture pipeline, the session service, the chat models, the agents and the background work
of turns. Opening resumes durable work left pending by a previous process (detections, phase 2 of turns) in the
background; closing drains background work first (graceful shutdown), then closes what it created.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from functools import partial
from pathlib import Path
from typing import Any

from memstack.capture.pipeline import CapturePipeline, PipelineEvent
from memstack.capture.scoring import MemoryScorer
from memstack.capture.tools import MemoryTools
from memstack.config import Config
from memstack.context import Agent, DelegatedTask, SessionMeta
from memstack.embed import Embedder
from memstack.errors import MemstackError
from memstack.guard import SemanticGuard, check_memory_candidate, check_session_fact
from memstack.observe import Account, Telemetry, accounting
from memstack.recall import ArchiveIndex, Ingestor, Recaller, RecallSettings, TurnVectorizer
from memstack.session import ModelSummarizer
from memstack.session.service import SessionService
from memstack.store import Store
from memstack.store.fence import detached
from memstack.turn.admission import FairGate
from memstack.turn.agents import AgentRegistry
from memstack.turn.background import Background
from memstack.turn.models import (
    ChatModels,
    Models,
    Tuning,
    build_classifier,
    build_guard,
    build_summarizer,
    build_update_judge,
    check_models,
)
from memstack.turn.phase1 import ToolBox
from memstack.turn.runner import TurnParts, TurnRequest, TurnRunner, TurnSettings
from memstack.turn.tools import MemoryToolBox
from memstack.types import ChatDone, ChatEvent, ChatResult, UserRef

__all__ = ["Turns"]

log = logging.getLogger("memstack.turn")


class Turns:
    """The chat side of an open engine (and recall and import, which share its parts)."""

    def __init__(
        self,
        config: Config,
        store: Store,
        embedder: Embedder,
        models: Models,
        tuning: Tuning,
        telemetry: Telemetry | None = None,
    ) -> None:
        check_models(config, models)  # ConfigError naming what to set, before anything is built
        self.config = config
        self.store = store
        self.embedder = embedder
        self.telemetry = telemetry = telemetry or Telemetry()
        self.agents = AgentRegistry(Path(config.home))
        self.background = Background(on_done=telemetry.job)
        self._sweeper: asyncio.Task[None] | None = None
        self.chat_models = ChatModels(config, models.chat)
        self.classifier, self._owns_classifier = build_classifier(config, embedder, models.classifier)
        self.updates, self._owns_updates = build_update_judge(config, embedder, models.updates)
        self.summarizer = build_summarizer(config, models.summarizer)
        self._owns_summarizer = models.summarizer is None
        self.guard = build_guard(tuning.guard, embedder)
        write_guard = partial(check_memory_candidate, guard=self.guard)  # the poisoning check of every save
        settings = tuning.turn or TurnSettings(badge_wait_s=config.badge_wait_s)
        self.admission = FairGate(settings.active_turns, settings.tenant_turns)
        self.pipeline = CapturePipeline(
            store,
            embedder,
            self.classifier,
            tiers=config.tiers,
            settings=tuning.capture,
            guard=write_guard,
            admission=self.admission.slot,
            updates=self.updates,
            on_event=self._detection_event,
        )
        self.scorer = MemoryScorer(store)
        self.tools = MemoryTools(
            store,
            embedder,
            tiers=config.tiers,
            scorer=self.scorer,
            writer=self.pipeline.writer,
            guard=write_guard,
            on_forget=self.forgotten,
        )
        fact_guard = partial(check_session_fact, guard=self.guard)  # the poisoning check of every base-truth entry
        self.sessions = SessionService(store, self.summarizer, tuning.session, guard=fact_guard)
        recall = tuning.recall or RecallSettings(max_messages=config.recall_cache_messages)
        self.vectorizer = TurnVectorizer(store, embedder)
        archive = ArchiveIndex(store, recall.retrieval, max_messages=recall.max_messages)
        self.recaller = Recaller(archive, embedder, self.scorer, recall)
        self.ingestor = Ingestor(
            store, self.pipeline, self.summarizer, self.vectorizer, settings=tuning.session, guard=fact_guard
        )
        self.runner = TurnRunner(
            TurnParts(
                store=store,
                embedder=embedder,
                pipeline=self.pipeline,
                sessions=self.sessions,
                scorer=self.scorer,
                recaller=self.recaller,
                vectorizer=self.vectorizer,
                background=self.background,
                admission=self.admission,
                chat_model=self.chat_models.for_agent,
                tools=self._tools,
                tiers=config.tiers,
                settings=settings,
                guard=self.guard,
                telemetry=telemetry,
            )
        )
        telemetry.depths = self.depths

    def depths(self) -> dict[str, int]:
        """Work queued or running in this process, for the metrics (``memstack_queue_depth``)."""
        return {
            "turn_work_active": self.admission.active,
            "turn_work_waiting": self.admission.waiting,
            "background": len(self.background),
            "detections": self.pipeline.pending,
        }

    def _detection_event(self, event: PipelineEvent) -> None:
        if event.name in ("completed", "failed"):
            self.telemetry.job("detection", "ok" if event.name == "completed" else "failed")

    def forget(self, user: UserRef) -> None:
        """Drop every cache of ``user`` in this process (recall's index of their archive, the recent exchanges the
        classifier reads, message vectors waiting for phase 2, whether their full tier was logged, and the guard's
        verdicts, kept under the texts they judged, every user's at once): the user was erased."""
        self.recaller.archive.forget(user)
        self.runner.forget(user)
        self.pipeline.writer.forget(user)
        if isinstance(self.guard, SemanticGuard):
            self.guard.clear()

    def forgotten(self, user: UserRef) -> None:
        """A memory of ``user`` was forgotten: drop the recent exchanges this process keeps for the classifier (they
        may hold what is now hidden; the next turn reads the session's visible raw window instead)."""
        self.runner.parts.recent.forget(user)

    def resume(self) -> None:
        """Start the startup scan: re-run detections and phase-2 work a previous process left unfinished; then scan
        again every ``resume_every_s`` seconds, for what other processes sharing the store leave when they die."""
        self.background.spawn(self._resume(), name="resume-pending")
        every = self.runner.parts.settings.resume_every_s
        if every > 0 and self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(
                self._sweep(every), name="memstack-resume-sweep", context=detached()
            )

    async def _resume(self, *, backfill: bool = True) -> None:
        with accounting(Account(self.telemetry)):  # model calls of resumed work: counted, for no one user
            await self._resume_all(backfill=backfill)

    async def _resume_all(self, *, backfill: bool) -> None:
        detections, turns = await asyncio.gather(self.pipeline.resume_pending(), self.sessions.resume_pending())
        if detections or turns:
            log.info("resumed %d memory detection(s) and %d session turn(s) left pending", detections, turns)
        if not backfill:
            return
        embedded = await self.vectorizer.backfill()  # archived turns whose vectors a crash (or an upgrade) left out
        if embedded:
            log.info("embedded %d archived turn(s) that had no vectors", embedded)

    async def _sweep(self, every_s: float) -> None:
        """The periodic scan (not the vectors' backfill: a full scan of the archive, left to each start)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await self._resume(backfill=False)
            except MemstackError as exc:  # the store is down: the next round tries again
                log.warning("resuming work left pending failed: %s: %s", type(exc).__name__, exc)

    def _tools(self, user: UserRef, agent: Agent, tier: str | None) -> ToolBox | None:
        box = MemoryToolBox(self.tools, user, {tool.name for tool in agent.tools}, tier=tier, guard=self.guard)
        return box if box.specs else None

    def prepare(
        self,
        user: UserRef,
        message: str,
        agent: str | Agent | None,
        session_id: str | None,
        metadata: Mapping[str, Any] | SessionMeta | None,
        memory: bool,
        temporary: bool,
        delegated: DelegatedTask | Mapping[str, Any] | str | None,
        *,
        capture: bool = True,
    ) -> TurnRequest:
        """One checked chat call (``InputError`` before any work); ``agent`` by object, name or YAML path."""
        return self.runner.prepare(
            user,
            message,
            self.agents.resolve(agent),
            session_id=session_id,
            metadata=metadata,
            memory=memory,
            temporary=temporary,
            delegated=delegated,
            capture=capture,
        )

    def run(self, request: TurnRequest, *, stream: bool) -> AsyncGenerator[ChatEvent, None]:
        return self.runner.run(request, stream=stream)

    async def answer(self, request: TurnRequest) -> ChatResult:
        """The turn, not streamed: its result."""
        events = self.runner.run(request, stream=False)
        async with aclosing(events):
            async for event in events:
                if isinstance(event, ChatDone):
                    return event.result
        raise AssertionError("a turn always ends with ChatDone")  # pragma: no cover

    async def wait_idle(self, timeout_s: float) -> bool:
        """Wait (cancelling nothing) for the turns' background work and the running memory detections."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self.background) or self.pipeline.pending:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.01)
        return True

    async def drain(self, timeout_s: float) -> None:
        """Graceful shutdown: the turns' background work (phase 2, resumes), then the pipeline's and the session
        service's own, each given ``timeout_s``; what is left is cancelled and resumes at the next open."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self._sweeper = None
        await self.background.drain(timeout_s)
        await self.pipeline.drain(timeout_s)
        await self.sessions.drain(timeout_s)

    async def aclose(self, timeout_s: float) -> None:
        try:
            await self.drain(timeout_s)
        finally:
            await self.chat_models.aclose()
            if self._owns_classifier:
                await self.classifier.aclose()
            if self._owns_updates:
                await self.updates.aclose()
            if self._owns_summarizer and isinstance(self.summarizer, ModelSummarizer):
                await self.summarizer.aclose()
