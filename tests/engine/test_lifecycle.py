"""Graceful shutdown drains background work; opening the engine resumes what a killed process left pending."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memstack.capture.pipeline import PipelineSettings
from memstack.turn.models import Tuning
from memstack_testing.openai_server import RecordedRequest

from .conftest import BACKENDS, SUMMARY, Rig, memories, until

VEGETARIAN = memories(("User is vegetarian", "preference", 0.95))
SHORT_LEASE = Tuning(capture=PipelineSettings(lease_s=0.5))


@pytest.mark.parametrize("rig", BACKENDS, indirect=True)
async def test_closing_waits_for_detection_and_phase_2(rig: Rig) -> None:
    async def classify(request: RecordedRequest) -> object:
        await until(lambda: bool(rig.times("summarizer", "in")))  # phase 2 began: the reply was sent without it
        await asyncio.sleep(0.3)
        return VEGETARIAN

    async def summarize(request: RecordedRequest) -> object:
        await asyncio.sleep(0.5)
        return SUMMARY

    rig.classify, rig.summarize = classify, summarize
    async with rig.engine(badge_wait_s=0.05) as ms:
        result = await ms.chat("ana", "I'm vegetarian.")
        assert result.memory_pending and rig.rows("memories") == 0
    # closed: both background pieces finished before the store closed
    assert rig.rows("memories") == 1
    assert rig.rows("session_turns", "status = 'summarized'") == 1
    assert rig.rows("jobs", "status = 'done'") == 1


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from memstack import AsyncMemstack
    from memstack.capture.llm import LLMClassifier
    from memstack.capture.pipeline import PipelineSettings
    from memstack.session import ModelSummarizer
    from memstack_testing.openai_server import ScriptedOpenAIServer
    from memstack.turn.models import Models, Tuning
    from memstack.models import get_model

    home, base_url = sys.argv[1], sys.argv[2]

    def model(name):
        return get_model(f"openai:{name}", base_url=base_url, api_key="sk-test")

    async def main():
        models = Models(model("chat"), LLMClassifier(model("classifier")), ModelSummarizer(model("summarizer")))
        tuning = Tuning(capture=PipelineSettings(lease_s=0.5))
        async with AsyncMemstack(home=home, embedder="hash:64", badge_wait_s=0.05, models=models, tuning=tuning) as ms:
            result = await ms.chat("ana", "I'm vegetarian.")
            print("REPLIED", result.session_id, flush=True)
            await asyncio.sleep(60)  # killed during its background work

    asyncio.run(main())
    """
)


async def test_open_resumes_what_a_killed_process_left(rig: Rig) -> None:
    hanging = True

    async def hang(reply: object) -> object:
        await until(lambda: not hanging, timeout=30)
        return reply

    rig.classify = lambda request: hang(VEGETARIAN)
    rig.summarize = lambda request: hang(SUMMARY)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(rig.home), rig.server.base_url],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 30)
        assert line.startswith("REPLIED"), line
        await until(lambda: bool(rig.times("summarizer", "in")) and bool(rig.times("classifier", "in")), 10)
        child.send_signal(signal.SIGKILL)  # mid-detection and mid-phase-2
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    hanging = False
    assert rig.rows("memories") == 0 and rig.rows("session_turns", "status = 'pending'") == 1
    assert rig.rows("jobs", "status = 'running'") == 1
    await asyncio.sleep(0.6)  # the dead process's lease on its detection lapses

    async with rig.engine(tuning=SHORT_LEASE, resume=False) as ms:  # tools that only look leave it alone
        assert await ms.wait_idle(10) and await ms.count("ana") == 0
    assert rig.rows("session_turns", "status = 'pending'") == 1

    async with rig.engine(tuning=SHORT_LEASE) as ms:
        assert await ms.wait_idle(10)
        assert [m.content for m in await ms.list("ana")] == ["User is vegetarian"]
    assert rig.rows("session_turns", "status = 'summarized'") == 1
    assert rig.rows("jobs", "status = 'done'") == 1 and rig.rows("memories") == 1
