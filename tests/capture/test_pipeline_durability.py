"""Durability of capture: a detection killed mid-way (a real process, SIGKILL) is resumed with no loss and no double
insert; shutdown drains running detections; unfinished ones are picked up again by ``resume_pending``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstack.capture import ClassifyContext
from memstack.capture.pipeline import CapturePipeline, PipelineSettings
from memstack.embed import Embedder
from memstack.store import Store
from memstack.types import JobStatus, UpdateAction
from memstack_testing.openai_server import ScriptedOpenAIServer

from .support import (
    ALICE,
    AT,
    BOTH_BACKENDS,
    MODEL,
    classify_requests,
    found,
    llm_classifier,
    mem,
    open_store,
    store_url,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

WORKER = Path(__file__).with_name("crash_worker.py")
NURSE = (mem("User is a nurse"), mem("User lives in Lyon"))


@pytest.fixture
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return store_url(request, tmp_path)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


class Worker:
    """The crash worker as a real child process, read line by line."""

    def __init__(self, url: str, base_url: str, mode: str) -> None:
        src = Path(__file__).resolve().parents[2] / "src"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), url, base_url, mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.events: list[dict[str, Any]] = []

    async def until(self, name: str, timeout: float = 60.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), timeout)
            if not line:
                raise AssertionError(
                    f"worker exited before {name!r}: {self.proc.stderr.read() if self.proc.stderr else ''}"
                )
            event = json.loads(line)
            self.events.append(event)
            if event["event"] == name:
                return event

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        assert self.proc.returncode == -signal.SIGKILL


async def _resume(store: Store, embedder: Embedder, server: ScriptedOpenAIServer) -> int:
    pipeline = CapturePipeline(store, embedder, llm_classifier(server))
    try:
        deadline = asyncio.get_running_loop().time() + 10
        while (resumed := await pipeline.resume_pending()) == 0:  # the dead worker's 1-second lease must lapse
            assert asyncio.get_running_loop().time() < deadline, "the killed detection was never resumed"
            await asyncio.sleep(0.2)
        return resumed
    finally:
        await pipeline.drain(5.0)
        await pipeline.classifier.aclose()


@BOTH_BACKENDS
async def test_killed_while_classifying_then_resumed_with_no_loss(
    url: str, server: ScriptedOpenAIServer, minilm: Embedder
) -> None:
    server.script(MODEL, found(*NURSE, delay_s=3.0))  # the answer the killed process never gets
    worker = Worker(url, server.base_url, "classify")
    await worker.until("ready")
    recorded = await worker.until("recorded")
    await server.wait_for_requests(1, timeout=30)
    worker.kill()

    store = await open_store(url, minilm)
    try:
        job = await store.jobs.get(recorded["job"])
        assert job.status is JobStatus.RUNNING and job.state == {}  # recorded, nothing done
        server.script(MODEL, found(*NURSE))
        assert await _resume(store, minilm, server) == 1
        contents = sorted(m.content for m in await store.index.list(ALICE))
        assert contents == ["User is a nurse", "User lives in Lyon"]
        done = await store.jobs.get(recorded["job"])
        assert done.status is JobStatus.DONE and done.attempts == 2
        assert done.result is not None and [u["action"] for u in done.result["updates"]] == ["created", "created"]
        assert all(m.source_turn_ids == ("s1:3",) for m in await store.index.list(ALICE))
    finally:
        await store.close()


@BOTH_BACKENDS
async def test_killed_between_a_write_and_its_checkpoint_then_resumed_without_a_double_insert(
    url: str, server: ScriptedOpenAIServer, minilm: Embedder
) -> None:
    server.script(MODEL, found(*NURSE))
    worker = Worker(url, server.base_url, "stored")
    stored = await worker.until("stored")
    assert stored["index"] == 0 and stored["action"] == "created"
    worker.kill()

    store = await open_store(url, minilm)
    try:
        first = await store.memories.get(ALICE, stored["memory_id"])  # the write landed
        job = await store.jobs.get(stored["job"])
        assert job.state["done"] == {} and len(job.state["candidates"]) == 2  # but was not checkpointed
        assert await _resume(store, minilm, server) == 1
        memories = await store.index.list(ALICE)
        assert sorted(m.content for m in memories) == ["User is a nurse", "User lives in Lyon"]  # once each
        assert first.id in {m.id for m in memories}
        assert len(classify_requests(server)) == 1  # the checkpointed candidates were reused, not classified again
        done = await store.jobs.get(stored["job"])
        assert done.status is JobStatus.DONE and done.result is not None
        assert [u["action"] for u in done.result["updates"]] == ["created", "created"]
    finally:
        await store.close()


async def test_drain_waits_for_running_detections(url: str, server: ScriptedOpenAIServer, minilm: Embedder) -> None:
    store = await open_store(url, minilm)
    server.script(MODEL, found(mem("User is a nurse"), delay_s=0.4))
    pipeline = CapturePipeline(store, minilm, llm_classifier(server))
    try:
        task = pipeline.start(ALICE, "I'm a nurse", at=AT)
        assert await pipeline.race(task, 0.05) is None
        await pipeline.drain(5.0)
        assert task.done() and pipeline.pending == 0
        assert [m.content for m in await store.index.list(ALICE)] == ["User is a nurse"]
    finally:
        await pipeline.classifier.aclose()
        await store.close()


@BOTH_BACKENDS
async def test_drain_timeout_leaves_the_job_recorded_for_the_next_start(
    url: str, server: ScriptedOpenAIServer, minilm: Embedder
) -> None:
    store = await open_store(url, minilm)
    server.script(MODEL, found(mem("User is a nurse"), delay_s=2.0))
    settings = PipelineSettings(lease_s=0.5)
    events: list[str] = []
    first = CapturePipeline(
        store, minilm, llm_classifier(server), settings=settings, on_event=lambda e: events.append(e.job_id)
    )
    try:
        task = first.start(ALICE, "I'm a nurse", at=AT, session_id="s", turn=1)
        await server.wait_for_requests(1)
        await first.drain(0.1)
        assert task.cancelled() and await store.index.list(ALICE) == []
        job = await store.jobs.get(events[0])
        assert job.status is JobStatus.RUNNING  # still recorded, claimable when its lease lapses
    finally:
        await first.classifier.aclose()
    server.script(MODEL, found(mem("User is a nurse")))
    await asyncio.sleep(0.6)
    second = CapturePipeline(store, minilm, llm_classifier(server))
    try:
        assert await second.resume_pending() == 1
        assert [m.content for m in await store.index.list(ALICE)] == ["User is a nurse"]
        assert (await store.jobs.get(events[0])).status is JobStatus.DONE
        assert await second.resume_pending() == 0
    finally:
        await second.classifier.aclose()
        await store.close()


@BOTH_BACKENDS
async def test_a_store_failure_is_retried_later_then_given_up(url: str, minilm: Embedder) -> None:
    """A detection whose store write fails is pending again after ``retry_after_s``, up to ``max_attempts`` runs."""
    store = await open_store(url, minilm)
    with ScriptedOpenAIServer() as server:
        server.script(MODEL, found(mem("User is a nurse")))
        settings = PipelineSettings(retry_after_s=0.05, max_attempts=2)
        pipeline = CapturePipeline(store, minilm, llm_classifier(server), settings=settings)
        try:
            # an agent id the store refuses makes every write fail with a typed error
            result = await pipeline.start(ALICE, "I'm a nurse", at=AT, agent_id="bad\nagent")
            assert result.failed and "InputError" in (result.error or "")
            job = await store.jobs.get(result.job_id or "")
            assert job.status is JobStatus.PENDING and job.run_after is not None
            await asyncio.sleep(0.1)
            assert await pipeline.resume_pending() == 1  # second and last attempt
            job = await store.jobs.get(result.job_id or "")
            assert job.status is JobStatus.FAILED and job.attempts == 2
            assert len(classify_requests(server)) == 1  # the classification was kept, only the write was retried
        finally:
            await pipeline.classifier.aclose()
            await store.close()


async def test_resumed_results_report_what_the_first_run_did(
    url: str, server: ScriptedOpenAIServer, minilm: Embedder
) -> None:
    store = await open_store(url, minilm)
    server.script(MODEL, found(mem("User is a nurse")))
    pipeline = CapturePipeline(store, minilm, llm_classifier(server))
    try:
        first = await pipeline.start(ALICE, "I'm a nurse", at=AT, session_id="s", turn=9)
        again = await pipeline.start(ALICE, "I'm a nurse", at=AT, session_id="s", turn=9)
        assert first.updates[0].action is UpdateAction.CREATED and again.updates == first.updates
    finally:
        await pipeline.classifier.aclose()
        await store.close()


@BOTH_BACKENDS
async def test_keep_resuming_picks_up_a_dead_workers_detection(
    url: str, server: ScriptedOpenAIServer, minilm: Embedder
) -> None:
    store = await open_store(url, minilm)
    payload = {"tenant": "default", "user_id": "alice", "message": "I'm a nurse", "at": AT.isoformat(), "tier": "free"}
    job = await store.jobs.enqueue("detect", "dead-worker-turn", payload, owner="dead-worker", lease_s=0.3)
    server.script(MODEL, found(mem("User is a nurse")))
    pipeline = CapturePipeline(store, minilm, llm_classifier(server))
    try:
        pipeline.keep_resuming(0.1)
        for _ in range(50):
            if (await store.jobs.get(job.id)).status is JobStatus.DONE:
                break
            await asyncio.sleep(0.1)
        assert (await store.jobs.get(job.id)).status is JobStatus.DONE
        assert [m.content for m in await store.index.list(ALICE)] == ["User is a nurse"]
        (memory,) = await store.index.list(ALICE)
        assert memory.source_turn_ids == (f"job:{job.id}",)  # no session: the job names the source
    finally:
        await pipeline.drain(2.0)
        await pipeline.classifier.aclose()
        await store.close()


async def test_a_resumed_detection_classifies_with_the_context_it_was_recorded_with(
    url: str, server: ScriptedOpenAIServer, minilm: Embedder
) -> None:
    """The job payload carries the detection context (the session's last exchange, the user's name): the worker
    that resumes it has nothing else of the session in memory, and must classify the same way."""
    store = await open_store(url, minilm)
    server.script(MODEL, found(mem("User has been married for five years"), delay_s=2.0))
    recent = (("user", "Here is a picture from our trip."), ("assistant", "How long have you been married?"))
    first = CapturePipeline(store, minilm, llm_classifier(server), settings=PipelineSettings(lease_s=0.3))
    try:
        first.start(ALICE, "Five years already!", at=AT, session_id="s", turn=2, context=ClassifyContext(recent))
        await server.wait_for_requests(1)
        await first.drain(0.05)  # the process stops while classifying
    finally:
        await first.classifier.aclose()
    server.script(MODEL, found(mem("User has been married for five years")))
    await asyncio.sleep(0.4)
    second = CapturePipeline(store, minilm, llm_classifier(server))
    try:
        assert await second.resume_pending() == 1
        first_request, resumed_request = server.chat_requests
        assert "assistant: How long have you been married?" in resumed_request.text
        assert resumed_request.text == first_request.text  # the same prompt: same message, date and context
        assert [m.content for m in await store.index.list(ALICE)] == ["User has been married for five years"]
    finally:
        await second.classifier.aclose()
        await store.close()
