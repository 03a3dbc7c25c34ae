"""A turn's stage timings (``ChatResult.manifest.timings``): consecutive stages that add up to the turn, each where
the time really went, with a chat model, a classifier and a summarizer that take known times (real HTTP)."""

from __future__ import annotations

import asyncio
import time

from memstack_testing.openai_server import RecordedRequest

from .conftest import SUMMARY, Rig, memories

STAGES = ["session", "queue", "embed", "recall", "guard", "assemble", "model", "write", "detection"]


async def test_every_turn_says_where_its_time_went(rig: Rig) -> None:
    async def answer(request: RecordedRequest) -> object:
        await asyncio.sleep(0.2)
        return "Lovely, noted."

    async def classify(request: RecordedRequest) -> object:
        await asyncio.sleep(0.5)  # still running when the model has answered: the reply waits for it (the badge)
        return memories(("User keeps bees", "fact", 0.95))

    async def summarize(request: RecordedRequest) -> object:
        await asyncio.sleep(0.3)  # phase 2 of turn 1, which turn 2 waits for (the session's lock)
        return SUMMARY

    async with rig.engine() as ms:
        await ms.chat("bo", "Hello there.")  # the engine's first turn loads what every later turn uses
        await ms.wait_idle()
        rig.answer, rig.classify, rig.summarize = answer, classify, summarize
        started = time.perf_counter()
        first = await ms.chat("ana", "I keep bees in my garden.")
        wall_ms = (time.perf_counter() - started) * 1000
        assert first.manifest is not None and first.badge  # detection won the badge race
        timings = first.manifest.timings
        assert timings is not None
        stages = timings.stages()
        assert list(stages) == STAGES and all(ms >= 0 for ms in stages.values())
        assert abs(sum(stages.values()) + timings.other_ms - timings.total_ms) < 0.01  # consecutive, none twice
        assert timings.total_ms <= wall_ms
        assert timings.model_ms >= 200
        assert timings.detection_ms >= 150  # 0.5 s of detection, less the model's 0.2 s it ran beside
        assert timings.embed_ms > 0 and timings.guard_ms > 0 and timings.session_ms < 200
        assert list(timings.to_dict()) == ["total_ms", *(f"{s}_ms" for s in STAGES), "other_ms"]

        rig.classify = None  # nothing to remember
        second = await ms.chat("ana", "What flowers do bees like?", session_id=first.session_id)
        assert second.manifest is not None and second.manifest.timings is not None
        assert second.manifest.timings.session_ms >= 200  # waited for turn 1's phase 2 (0.3 s of summarizing)
        assert second.manifest.timings.detection_ms < 100  # nothing to remember: detection was done by the reply

        stored = await ms.store.contexts.get("default", second.context_id or "", user_id="ana")
        assert stored.timings is None and "timings" not in stored.to_dict()  # kept on the reply, never stored
