"""Automatic memory capture for one chat turn: started at the top of the turn, raced for the badge, durable.

::

    pipeline = CapturePipeline(store, embedder, classifier, tiers=config.tiers)
    task = pipeline.start(user, message, at=now, tier="free", session_id=sid, turn=3)   # microseconds
    ...                                                                                  # the chat work
    result = await pipeline.race(task, badge_wait_s=3.0)   # DetectionResult, or None when the timer won
    await pipeline.drain(10.0)                              # at shutdown

What the task does, in order (DESIGN §1, §3):

1. **record** the job (``store.jobs``, kind ``detect``, keyed by the turn) *before any work*; a job already done for
   that key returns its recorded result;
2. **classify** the message (candidates with confidence ≥ 0.7), bounded by ``classify_timeout_s``; a classifier that
   gives up (the LLM classifier after its retry) or raises is recorded on the job and reported as ``failed`` — never
   raised into the chat. With the offline classifier, the statements it passed over that have a change
   word are checked against the user's memories too (:mod:`~memstack.capture.news`: "Sadly Bubbles didn't make
   it"), and those that supersede one join the candidates. Most messages stop here with nothing to save: the job is
   completed, nothing is embedded;
3. **screen** the candidates for memory poisoning (an instruction to the assistant is quarantined, not stored) and
   **checkpoint** them on the job, so a resumed job does not classify again;
4. **embed** the kept candidates in one batch; for each, **one** nearest-neighbour call, the calibrated dedup rule,
   supersede / insert under the tier limit (:class:`~memstack.capture.writer.MemoryWriter`), then a checkpoint of
   what was stored;
5. **complete** the job with the result.

Erasure: a detection runs under the erasure fence of the turn that started it, or, resumed, under one it pins
before it reads anything of the user (:mod:`memstack.store.fence`); once the user is erased its writes are refused
(``UserErased``) and it stops, leaving nothing.

Crash safety: a job left unfinished (process killed) is claimed again by :meth:`CapturePipeline.resume_pending` once
its lease lapsed; the checkpoint says which candidates are done, and each write carries the turn in
``source_turn_ids`` so a write that landed just before the crash (but after the last checkpoint) is recognised
instead of repeated. No candidate is lost, none is stored twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from memstack.capture.base import MIN_CONFIDENCE, Classifier, ClassifierFailure, ClassifyContext
from memstack.capture.checkpoint import candidate_from_dict, candidate_to_dict, outcome_from_dict, outcome_to_dict
from memstack.capture.dedup import NEAREST_K, DedupParams, DedupRule, params_for
from memstack.capture.judge import UpdateJudge, get_update_judge
from memstack.capture.news import NewsFinder
from memstack.capture.writer import Guard, MemoryWriter, Quarantined, WriteOutcome, default_guard, screen_candidates
from memstack.config import TierLimits
from memstack.embed import Embedder
from memstack.errors import InputError, MemstackError, NotFound, UserErased
from memstack.store.base import DEFAULT_LEASE_S, Store
from memstack.store.fence import Fence, fenced
from memstack.types import (
    Candidate,
    Job,
    JobStatus,
    MemoryUpdate,
    UpdateAction,
    UserRef,
    new_id,
    utcnow,
)

__all__ = ["DETECT", "CapturePipeline", "DetectionResult", "PipelineEvent", "PipelineSettings"]

log = logging.getLogger(__name__)

#: The job kind of a detection.
DETECT = "detect"

_FAILURES: ContextVar[list[ClassifierFailure] | None] = ContextVar("memstack_capture_failures", default=None)


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """``neighbours``: memories returned by the one nearest-neighbour call per candidate. ``lease_s``: how long a
    detection is this process's before another may resume it. Store failures are retried after ``retry_after_s``,
    up to ``max_attempts`` runs of a job in all."""

    min_confidence: float = MIN_CONFIDENCE
    neighbours: int = NEAREST_K
    classify_timeout_s: float = 30.0
    lease_s: float = DEFAULT_LEASE_S
    max_attempts: int = 3
    retry_after_s: float = 30.0
    resume_batch: int = 16

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_confidence <= 1.0:
            raise InputError(f"min_confidence must be between 0 and 1, got {self.min_confidence}")
        if self.neighbours < 1 or self.max_attempts < 1 or self.resume_batch < 1:
            raise InputError("neighbours, max_attempts and resume_batch must be at least 1")
        if self.classify_timeout_s <= 0 or self.lease_s <= 0 or self.retry_after_s <= 0:
            raise InputError("classify_timeout_s, lease_s and retry_after_s must be positive")


@dataclass(frozen=True, slots=True)
class DetectionResult:
    """What detection did for one message: the badge's ``updates``, an upgrade prompt for an explicit save at the
    tier limit, ``failed`` when the classifier or the store gave up (recorded on the job), and the candidates
    quarantined as instructions to the assistant."""

    updates: tuple[MemoryUpdate, ...] = ()
    upgrade_prompt: str | None = None
    failed: bool = False
    quarantined: tuple[Quarantined, ...] = ()
    job_id: str | None = None
    error: str | None = None

    @property
    def saved(self) -> tuple[MemoryUpdate, ...]:
        """The updates that changed what is remembered (created or updated)."""
        return tuple(u for u in self.updates if u.action in (UpdateAction.CREATED, UpdateAction.UPDATED))

    def to_dict(self) -> dict[str, Any]:
        return {
            "updates": [u.to_dict() for u in self.updates],
            "upgrade_prompt": self.upgrade_prompt,
            "failed": self.failed,
            "quarantined": [q.to_dict() for q in self.quarantined],
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, job_id: str | None = None) -> DetectionResult:
        quarantined = tuple(
            Quarantined(str(q["content"]), str(q["category"]), tuple(q.get("flags", ())), str(q.get("reason", "")))
            for q in data.get("quarantined", ())
        )
        return cls(
            updates=tuple(MemoryUpdate.from_dict(u) for u in data.get("updates", ())),
            upgrade_prompt=data.get("upgrade_prompt"),
            failed=bool(data.get("failed", False)),
            quarantined=quarantined,
            job_id=job_id,
            error=data.get("error"),
        )


@dataclass(frozen=True, slots=True)
class PipelineEvent:
    """A step of one detection, for logs and metrics: ``recorded``, ``classified``, ``stored``, ``completed``,
    ``failed``."""

    name: str
    job_id: str
    detail: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class _ReportsFailures(Protocol):
    on_failure: Callable[[ClassifierFailure], None] | None


@dataclass(frozen=True, slots=True)
class _Request:
    user: UserRef
    message: str
    at: datetime
    tier: str
    session_id: str | None
    turn: int | None
    agent_id: str | None
    recent: tuple[tuple[str, str], ...] = ()
    user_name: str | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "tenant": self.user.tenant,
            "user_id": self.user.user_id,
            "message": self.message,
            "at": self.at.isoformat(),
            "tier": self.tier,
            "session_id": self.session_id,
            "turn": self.turn,
            "agent_id": self.agent_id,
            "recent": [list(pair) for pair in self.recent],
            "user_name": self.user_name,
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> _Request:
        try:
            turn = data.get("turn")
            return cls(
                user=UserRef(str(data["user_id"]), str(data["tenant"])),
                message=str(data["message"]),
                at=datetime.fromisoformat(str(data["at"])),
                tier=str(data["tier"]),
                session_id=None if data.get("session_id") is None else str(data["session_id"]),
                turn=None if turn is None else int(turn),
                agent_id=None if data.get("agent_id") is None else str(data["agent_id"]),
                recent=tuple((str(r), str(t)) for r, t in data.get("recent", ())),
                user_name=None if data.get("user_name") is None else str(data["user_name"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"unreadable detection job payload ({exc}); the job is given up") from None

    def key(self) -> str:
        """The job key: one detection per turn (or per message and time when there is no session)."""
        if self.session_id is not None and self.turn is not None:
            parts: tuple[object, ...] = (self.user.tenant, self.user.user_id, self.session_id, self.turn)
        else:
            parts = (self.user.tenant, self.user.user_id, self.message, self.at.isoformat())
        digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=16).hexdigest()
        return f"turn:{digest}"

    def turn_ref(self, job: Job) -> str:
        """What ``source_turn_ids`` records for memories of this message."""
        if self.session_id is not None and self.turn is not None:
            return f"{self.session_id}:{self.turn}"
        return f"job:{job.id}"


@asynccontextmanager
async def _admit_all(tenant: str) -> AsyncIterator[None]:
    yield


class _ClassifierGaveUp(MemstackError):
    """The classifier failed for this message (after its own retry); the job is given up."""


class CapturePipeline:
    """Detects, dedups and stores long-term memories in the background of chat turns. See the module docstring.

    ``store``, ``embedder`` and ``classifier`` are not owned (not closed here). ``dedup``: the rule's parameters
    (default: the calibrated ones of the embedder, :func:`~memstack.capture.dedup.params_for`). ``guard``: the
    write-time poisoning check (default ``memstack.guard.check_memory_candidate`` with the phrase rules; pass
    ``partial(check_memory_candidate, guard=SemanticGuard(embedder))`` to add the semantic layer: it runs off the
    event loop). ``on_event`` is called at each step of each detection. ``admission``: a slot per detection's work
    (the turns' ``FairGate.slot``, so detections share the machine fairly with the turns; default: none).
    ``updates``: who decides whether a candidate supersedes a memory (:mod:`~memstack.capture.judge`; not owned;
    default the offline judge). With the offline classifier (``offline:…``), which keeps only first-person
    statements, news told otherwise is looked for too (:mod:`~memstack.capture.news`) and given to the same judge."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        classifier: Classifier,
        *,
        tiers: TierLimits | None = None,
        dedup: DedupParams | None = None,
        clock: Callable[[], datetime] = utcnow,
        guard: Guard | None = None,
        settings: PipelineSettings | None = None,
        on_event: Callable[[PipelineEvent], None] | None = None,
        admission: Callable[[str], AbstractAsyncContextManager[None]] | None = None,
        updates: UpdateJudge | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.classifier = classifier
        self.tiers = tiers or TierLimits()
        self.settings = settings or PipelineSettings()
        self.clock = clock
        self.on_event = on_event
        self._admission = admission or _admit_all
        self._guard = guard or default_guard()
        rule = DedupRule(dedup or params_for(embedder.name))
        judge = updates if updates is not None else get_update_judge("offline", embedder=embedder)
        self._writer = MemoryWriter(store, rule, neighbours=self.settings.neighbours, judge=judge)
        self._news: NewsFinder | None = None  # the offline classifier: news it passed over (news.py)
        if classifier.name.startswith("offline"):
            self._news = NewsFinder(store, embedder, judge)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{new_id('capture')}"
        self._tasks: set[asyncio.Task[DetectionResult]] = set()
        self._recorded: dict[asyncio.Task[DetectionResult], asyncio.Event] = {}
        self._resumer: asyncio.Task[None] | None = None
        self._watch_failures(classifier)

    @property
    def writer(self) -> MemoryWriter:
        return self._writer

    @property
    def pending(self) -> int:
        """Detections still running in this process."""
        return len(self._tasks)

    # -- the chat turn's side -----------------------------------------------------------------------------------------

    def start(
        self,
        user: UserRef,
        message: str,
        *,
        at: datetime | None = None,
        tier: str | None = None,
        session_id: str | None = None,
        turn: int | None = None,
        agent_id: str | None = None,
        context: ClassifyContext | None = None,
    ) -> asyncio.Task[DetectionResult]:
        """Start detecting memories in ``message`` and return at once; the task records its job before working.

        ``tier`` selects the limit (``InputError`` for an unknown tier); ``session_id`` and ``turn`` make the
        detection idempotent per turn and are recorded in the memories' ``source_turn_ids``."""
        self.tiers.limit_for(tier)  # an unknown tier fails here, in the caller, not in the background
        request = _Request(
            user=user,
            message=message,
            at=at or self.clock(),
            tier=self.tiers.name_for(tier),
            session_id=session_id,
            turn=turn,
            agent_id=agent_id,
            recent=context.recent if context else (),
            user_name=context.user_name if context else None,
        )
        recorded = asyncio.Event()
        task = self._spawn(self._detect(request, recorded))
        self._recorded[task] = recorded
        task.add_done_callback(self._forget_recorded)
        return task

    def _forget_recorded(self, task: asyncio.Task[DetectionResult]) -> None:
        event = self._recorded.pop(task, None)
        if event is not None:
            event.set()

    async def recorded(self, task: asyncio.Task[DetectionResult]) -> None:
        """Wait until the detection's job is recorded in the store (or could not be): from then on it survives a
        crash. A chat turn waits for this before it acknowledges the reply; by then it has almost always happened."""
        event = self._recorded.get(task)
        if event is not None:
            await event.wait()

    async def race(self, task: asyncio.Task[DetectionResult], badge_wait_s: float) -> DetectionResult | None:
        """The detection's result if it finishes within ``badge_wait_s``, else ``None``; the task is never
        cancelled by the timer and still saves in the background."""
        if task.done():
            return None if task.cancelled() else task.result()
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(0.0, badge_wait_s))
        except TimeoutError:
            return None
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or current.cancelling() == 0):
                return None  # the detection was cancelled (shutdown), not the caller
            raise

    # -- lifecycle ----------------------------------------------------------------------------------------------------

    async def resume_pending(self) -> int:
        """Run every recorded-but-unfinished detection (pending, or running with a lapsed lease) to completion, a
        batch at a time; return how many were resumed. Call at startup, and periodically if several processes
        share the store."""
        total = 0
        while True:
            jobs = await self.store.jobs.claim_pending(
                DETECT, self.settings.resume_batch, owner=self.owner, lease_s=self.settings.lease_s
            )
            if not jobs:
                return total
            total += len(jobs)
            await asyncio.gather(*(self._spawn(self._resume(job)) for job in jobs))

    def keep_resuming(self, every_s: float) -> None:
        """Also call :meth:`resume_pending` every ``every_s`` seconds in the background (until :meth:`drain`): a
        detection left by a process that died less than a lease ago is resumed soon after its lease lapses, not
        only at the next start."""
        if every_s <= 0:
            raise InputError(f"every_s must be a positive number of seconds, got {every_s}")
        if self._resumer is None or self._resumer.done():
            self._resumer = asyncio.get_running_loop().create_task(self._resume_loop(every_s), name="memstack-resume")

    async def _resume_loop(self, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.resume_pending()
            except MemstackError as exc:  # the store is down: try again next round
                log.warning("resuming memory detections failed: %s: %s", type(exc).__name__, exc)

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Wait up to ``timeout_s`` for running detections; cancel the rest (their jobs stay recorded and are
        resumed by the next :meth:`resume_pending` once their lease lapses)."""
        if self._resumer is not None:
            self._resumer.cancel()
            await asyncio.gather(self._resumer, return_exceptions=True)
            self._resumer = None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._tasks and (remaining := deadline - loop.time()) > 0:
            await asyncio.wait(set(self._tasks), timeout=remaining)
        left = list(self._tasks)
        if not left:
            return
        log.warning("%d memory detection(s) unfinished after %.1f s; they resume on restart", len(left), timeout_s)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    # -- the background task ------------------------------------------------------------------------------------------

    def _spawn(self, coro: Any) -> asyncio.Task[DetectionResult]:
        task: asyncio.Task[DetectionResult] = asyncio.get_running_loop().create_task(coro, name="memstack-capture")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _emit(self, name: str, job_id: str, **detail: Any) -> None:
        if self.on_event is not None:
            self.on_event(PipelineEvent(name, job_id, detail))

    async def _detect(self, request: _Request, recorded: asyncio.Event) -> DetectionResult:
        try:
            job = await self.store.jobs.enqueue(
                DETECT, request.key(), request.payload(), owner=self.owner, lease_s=self.settings.lease_s
            )
        except UserErased as exc:  # the turn's user was erased since it began: nothing to detect for
            log.info("memory detection not recorded: %s", exc)
            return DetectionResult(failed=True, error=f"{type(exc).__name__}: {exc}")
        except MemstackError as exc:
            log.warning("memory detection not recorded, so not run: %s: %s", type(exc).__name__, exc)
            return DetectionResult(failed=True, error=f"{type(exc).__name__}: {exc}")
        finally:
            recorded.set()
        if job.status is JobStatus.DONE:
            return DetectionResult.from_dict(job.result or {}, job_id=job.id)
        if job.status is JobStatus.FAILED:
            return DetectionResult(failed=True, job_id=job.id, error=job.error)
        if job.owner != self.owner:
            return DetectionResult(job_id=job.id)  # this turn's detection is another worker's
        self._emit("recorded", job.id)
        return await self._run(job, request)

    async def _resume(self, job: Job) -> DetectionResult:
        try:
            request = _Request.from_payload(job.payload)
        except InputError as exc:
            await self.store.jobs.fail(job.id, str(exc), retry_at=None)
            return DetectionResult(failed=True, job_id=job.id, error=str(exc))
        # Claimed before the user's erasure fence could be pinned: pin it, then make sure the job is still there (an
        # erasure between the claim and the pin took it); from then on an erasure refuses the job's writes.
        with fenced(Fence(request.user, await self.store.users.epoch(request.user))):
            try:
                await self.store.jobs.get(job.id)
            except NotFound:
                return DetectionResult(failed=True, job_id=job.id, error="the user was erased")
            return await self._run(job, request)

    async def _run(self, job: Job, request: _Request) -> DetectionResult:
        try:
            async with self._admission(request.user.tenant):
                return await self._work(job, request)
        except UserErased as exc:  # its job went with the user: nothing to record
            log.info("memory detection %s stopped: %s", job.id, exc)
            return DetectionResult(failed=True, job_id=job.id, error=f"{type(exc).__name__}: {exc}")
        except _ClassifierGaveUp as exc:
            return await self._give_up(job, str(exc), retry=False)
        except MemstackError as exc:  # the store or the embedder failed: retried later, a few times
            return await self._give_up(job, f"{type(exc).__name__}: {exc}", retry=True)
        except Exception as exc:  # a bug must not reach the chat through race(): record it, retry later
            log.exception("memory detection %s failed unexpectedly", job.id)
            return await self._give_up(job, f"{type(exc).__name__}: {exc}", retry=True)

    async def _give_up(self, job: Job, error: str, *, retry: bool) -> DetectionResult:
        again = retry and job.attempts < self.settings.max_attempts
        retry_at = utcnow() + timedelta(seconds=self.settings.retry_after_s) if again else None
        log.warning("memory detection %s failed (%s); %s", job.id, error, "will retry" if again else "given up")
        try:
            await self.store.jobs.fail(job.id, error, retry_at=retry_at)
        except MemstackError as exc:  # the job stays running; its lease lapses and it is resumed
            log.warning("could not record the failure of %s: %s", job.id, exc)
        self._emit("failed", job.id, error=error, retry=again)
        return DetectionResult(failed=True, job_id=job.id, error=error)

    async def _work(self, job: Job, request: _Request) -> DetectionResult:
        state: dict[str, Any] = dict(job.state)
        if "candidates" not in state:
            candidates = await self._classify(job, request)
            if self._news is not None:
                candidates += await self._news.find(
                    request.user, request.message, request.at, candidates, request.agent_id
                )
            if not candidates:  # the common case: nothing worth remembering
                await self.store.jobs.complete(job.id, DetectionResult().to_dict())
                self._emit("completed", job.id, updates=0)
                return DetectionResult(job_id=job.id)
            kept, held = await asyncio.to_thread(screen_candidates, candidates, self._guard)  # may embed
            for q in held:
                log.warning("memory candidate quarantined (%s): %r", ", ".join(q.flags), q.content[:200])
            state = {
                "candidates": [candidate_to_dict(c) for c in kept],
                "quarantined": [q.to_dict() for q in held],
                "done": {},
            }
            await self.store.jobs.checkpoint(job.id, state, lease_s=self.settings.lease_s)
        kept = [candidate_from_dict(d) for d in state["candidates"]]
        quarantined = DetectionResult.from_dict({"quarantined": state.get("quarantined", ())}).quarantined
        done: dict[str, Any] = dict(state.get("done", {}))
        outcomes = await self._store_candidates(job, request, kept, done, state)
        prompts = [o.upgrade_prompt for o in outcomes if o.upgrade_prompt]
        result = DetectionResult(
            updates=tuple(o.update for o in outcomes),
            upgrade_prompt=prompts[0] if prompts else None,
            quarantined=quarantined,
            job_id=job.id,
        )
        await self.store.jobs.complete(job.id, result.to_dict())
        self._emit("completed", job.id, updates=len(result.updates))
        return result

    async def _classify(self, job: Job, request: _Request) -> list[Candidate]:
        sink: list[ClassifierFailure] = []
        _FAILURES.set(sink)
        context = ClassifyContext(recent=request.recent, user_name=request.user_name)
        try:
            found = await asyncio.wait_for(
                self.classifier.classify(request.message, at=request.at, context=context),
                self.settings.classify_timeout_s,
            )
        except TimeoutError:
            raise _ClassifierGaveUp(
                f"the classifier {self.classifier.name} took longer than {self.settings.classify_timeout_s:g} s"
            ) from None
        except MemstackError as exc:
            name = self.classifier.name
            raise _ClassifierGaveUp(f"the classifier {name} failed: {type(exc).__name__}: {exc}") from None
        except Exception as exc:  # a third-party classifier's bug must not reach the chat
            log.exception("the classifier %s raised", self.classifier.name)
            raise _ClassifierGaveUp(f"the classifier {self.classifier.name} raised {type(exc).__name__}") from None
        if sink:
            f = sink[-1]
            raise _ClassifierGaveUp(f"the classifier {f.classifier} gave up after {f.attempts} attempt(s): {f.error}")
        kept = [c for c in found if c.confidence >= self.settings.min_confidence]
        self._emit("classified", job.id, candidates=len(kept))
        return kept

    async def _store_candidates(
        self, job: Job, request: _Request, kept: Sequence[Candidate], done: dict[str, Any], state: dict[str, Any]
    ) -> list[WriteOutcome]:
        todo = [i for i in range(len(kept)) if str(i) not in done]
        if todo:
            vectors = await self.embedder.embed([kept[i].content for i in todo])

            async def written(row: int, outcome: WriteOutcome) -> None:
                i = todo[row]
                self._emit("stored", job.id, index=i, action=outcome.update.action.value, memory_id=outcome.update.id)
                done[str(i)] = outcome_to_dict(outcome)
                state["done"] = done
                await self.store.jobs.checkpoint(job.id, state, lease_s=self.settings.lease_s)

            await self._writer.write_all(
                request.user,
                [(kept[i], vectors[row]) for row, i in enumerate(todo)],
                tier=request.tier,
                limit=self.tiers.limit_for(request.tier),
                agent_id=request.agent_id,
                turn_ref=request.turn_ref(job),
                on_written=written,
            )
        return [outcome_from_dict(done[str(i)]) for i in range(len(kept))]

    # -- classifier failures ------------------------------------------------------------------------------------------

    @staticmethod
    def _watch_failures(classifier: Classifier) -> None:
        """Classifiers that report give-ups through ``on_failure`` (the LLM classifier) return no candidates for a
        failed message; chain a hook that tells the detection running in this task that it failed."""
        if not isinstance(classifier, _ReportsFailures):
            return
        previous = classifier.on_failure
        if getattr(previous, "_memstack_capture", False):
            return

        def report(failure: ClassifierFailure) -> None:
            sink = _FAILURES.get()
            if sink is not None:
                sink.append(failure)
            if previous is not None:
                previous(failure)

        report._memstack_capture = True  # type: ignore[attr-defined]
        classifier.on_failure = report
