"""``memstack bench capture``: what memory capture costs a chat turn when nothing is saved.

Seed 02: about 85% of messages hold nothing worth remembering, and for them capture must cost almost nothing. Two
measurements, one after the other, on the same pipeline (messages of that kind: questions, task requests, greetings):

**The detection itself** (``detect_*``), awaited directly: ``pipeline.start(...)`` then ``await`` the task, timed
together: recording the job in the store, the classifier, completing the job. Nothing runs beside it.

* cold: the first ``cold`` messages after the store, embedder, classifier and pipeline were created (each text
  new to the process): ``detect_first_ms`` (the very first, which pays for whatever is done once: SQLite's first
  statements, and with the offline classifier, embedding its exemplars if a message gets past its rules),
  ``detect_cold_p50_ms`` / ``detect_cold_p99_ms`` over the ``cold`` messages;
* warm: the next ``messages`` messages (the texts repeat), ``detect_p50_ms`` / ``detect_p99_ms``.

**What it adds to the turn's critical path**, as the chat turn does it (after ``warmup`` untimed iterations):

1. ``pipeline.start(...)`` at the top of the turn — timed (``start``);
2. the chat work, simulated by waiting ``chat_ms`` (the model call; detection runs meanwhile) — not timed;
3. ``await pipeline.race(task, badge_wait_s)`` just before replying — timed (``await``).

``added = start + await`` is the latency capture adds to the turn; ``p50_ms`` / ``p99_ms`` are its percentiles.
When detection finishes within ``chat_ms`` (the usual case) this is the cost of starting a task and collecting its
result, not of detecting: that is the ``detect_*`` figures. Also reported: ``background_p50_ms`` (start to detection
finished while the chat work waits, as scheduled beside it), ``saved`` (messages that did store something: 0 for a
valid run) and ``load_avg``. The store is a fresh SQLite file in a temporary directory; the classifier is the
configured one (offline ``rules-v1`` by default).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstack.errors import InputError
from memstack.evals.common import percentile
from memstack.types import UserRef

if TYPE_CHECKING:
    from memstack.capture.pipeline import CapturePipeline

__all__ = ["NO_SAVE_MESSAGES", "CaptureBenchConfig", "run_capture_bench"]

#: Typical messages with nothing to remember: questions, task requests, greetings, thanks, follow-ups.
NO_SAVE_MESSAGES: tuple[str, ...] = (
    "What is the difference between mitosis and meiosis?",
    "Can you explain how photosynthesis works in simple terms?",
    "Write me a 200-word essay on the causes of World War I.",
    "Hi! How are you today?",
    "Thanks, that was really helpful.",
    "Could you make a quiz with five questions about the French Revolution?",
    "What's the derivative of x^2 * sin(x)?",
    "Summarize the main ideas of Kant's categorical imperative.",
    "Give me three examples of irony in Romeo and Juliet.",
    "How do I balance this chemical equation: H2 + O2 -> H2O?",
    "Can you check my grammar in this sentence: 'Their going to the store tomorrow.'",
    "What time zone is Tokyo in?",
    "Explain recursion with a short Python example.",
    "Translate 'where is the library' into Spanish.",
    "ok, next question please",
    "Why is the sky blue?",
    "Make flashcards for the first ten elements of the periodic table.",
    "What are you able to help me with?",
    "Can you simplify (3x + 6) / 3?",
    "List the main causes of the Great Depression.",
    "Good morning!",
    "How many bones are in the human body?",
    "Rewrite this paragraph so it sounds more formal.",
    "What does 'ceteris paribus' mean?",
    "Can you give me a hint instead of the full answer?",
    "What's the capital of Australia?",
    "Compare Python lists and tuples.",
    "Show me how to solve a quadratic equation by completing the square.",
    "That makes sense now, thank you!",
    "What should I read to understand supply and demand?",
)


@dataclass(frozen=True, slots=True)
class CaptureBenchConfig:
    messages: int = 500
    chat_ms: float = 20.0
    warmup: int = 20
    cold: int = 20  # the first messages after start, timed as the cold detection figure
    badge_wait_s: float = 3.0
    embedder: str = "local:minilm"
    classifier: str | None = None  # None: offline rules-v1

    def __post_init__(self) -> None:
        if self.messages < 1 or not 1 <= self.cold <= len(NO_SAVE_MESSAGES):
            raise InputError(f"messages must be at least 1 and cold between 1 and {len(NO_SAVE_MESSAGES)}")


def _stamp(box: list[float], _task: object) -> None:
    box.append(time.perf_counter())


async def run_capture_bench(cfg: CaptureBenchConfig) -> dict[str, Any]:
    """Run the benchmark; the result is the command's JSON line."""
    from memstack.capture import get_classifier
    from memstack.capture.pipeline import CapturePipeline
    from memstack.embed import get_embedder
    from memstack.store.sqlite import SQLiteStore

    embedder = get_embedder(cfg.embedder)
    classifier = get_classifier(cfg.classifier, embedder=embedder)
    added: list[float] = []
    starts: list[float] = []
    awaits: list[float] = []
    background: list[float] = []
    saved = 0
    failed = 0
    user = UserRef("bench-user")
    with tempfile.TemporaryDirectory(prefix="memstack-bench-") as tmp:
        store = await SQLiteStore.open(Path(tmp) / "memstack.db", dim=embedder.dim, embedder=embedder.name)
        pipeline = CapturePipeline(store, embedder, classifier)
        try:
            detect = await _detect_alone(pipeline, user, cfg.cold + cfg.messages)
            for i in range(cfg.warmup + cfg.messages):
                message = NO_SAVE_MESSAGES[i % len(NO_SAVE_MESSAGES)]
                finished: list[float] = []
                t0 = time.perf_counter()
                task = pipeline.start(user, message, session_id="bench", turn=i)
                t1 = time.perf_counter()
                task.add_done_callback(partial(_stamp, finished))
                await asyncio.sleep(cfg.chat_ms / 1000)  # the chat work; detection runs meanwhile
                t2 = time.perf_counter()
                result = await pipeline.race(task, cfg.badge_wait_s)
                t3 = time.perf_counter()
                if i < cfg.warmup:
                    continue
                starts.append((t1 - t0) * 1000)
                awaits.append((t3 - t2) * 1000)
                added.append(starts[-1] + awaits[-1])
                if finished:
                    background.append((finished[0] - t0) * 1000)
                if result is None or result.failed:
                    failed += 1
                elif result.updates or result.quarantined:
                    saved += 1
            await pipeline.drain(10.0)
        finally:
            await store.close()
            await classifier.aclose()
            await embedder.aclose()
    cold, warm = detect.times[: cfg.cold], detect.times[cfg.cold :]
    return {
        "messages": cfg.messages,
        "classifier": classifier.name,
        "chat_ms": cfg.chat_ms,
        "p50_ms": round(percentile(added, 50), 4),
        "p99_ms": round(percentile(added, 99), 4),
        "start_p50_ms": round(percentile(starts, 50), 4),
        "await_p50_ms": round(percentile(awaits, 50), 4),
        "background_p50_ms": round(percentile(background, 50), 3),
        "background_p99_ms": round(percentile(background, 99), 3),
        "saved": saved,
        "failed": failed,
        "cold_messages": len(cold),
        "detect_first_ms": round(cold[0], 3),
        "detect_cold_p50_ms": round(percentile(cold, 50), 3),
        "detect_cold_p99_ms": round(percentile(cold, 99), 3),
        "detect_p50_ms": round(percentile(warm, 50), 3),
        "detect_p99_ms": round(percentile(warm, 99), 3),
        "detect_saved": detect.saved,
        "detect_failed": detect.failed,
        "load_avg": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


@dataclass(slots=True)
class _Detections:
    times: list[float]
    saved: int = 0
    failed: int = 0


async def _detect_alone(pipeline: CapturePipeline, user: UserRef, count: int) -> _Detections:
    """Start and await ``count`` detections one after the other, nothing beside them; each one's time in ms."""
    out = _Detections([])
    for i in range(count):
        message = NO_SAVE_MESSAGES[i % len(NO_SAVE_MESSAGES)]
        started = time.perf_counter()
        result = await pipeline.start(user, message, session_id="detect", turn=i)
        out.times.append((time.perf_counter() - started) * 1000)
        if result.failed:
            out.failed += 1
        elif result.updates or result.quarantined:
            out.saved += 1
    return out
