"""``memstack bench capture``: what memory capture adds to a chat turn's critical path when nothing is saved.

Seed 02: about 85% of messages hold nothing worth remembering, and for them capture must cost almost nothing. Each
iteration does what the chat turn does with a message of that kind (questions, task requests, greetings):

1. ``pipeline.start(...)`` at the top of the turn — timed (``start``);
2. the chat work, simulated by waiting ``chat_ms`` (the model call; detection runs meanwhile) — not timed;
3. ``await pipeline.race(task, badge_wait_s)`` just before replying — timed (``await``).

``added = start + await`` is the latency capture adds to the turn; ``p50_ms`` / ``p99_ms`` are its percentiles.
Also reported: ``background_p50_ms`` (start to detection finished, job recorded and completed in the store: work
done off the critical path) and ``saved`` (messages that did store something: 0 for a valid run).
The store is a fresh SQLite file in a temporary directory; the classifier is the configured one (offline
``rules-v1`` by default).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from memstack.evals.common import percentile
from memstack.types import UserRef

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
    badge_wait_s: float = 3.0
    embedder: str = "local:minilm"
    classifier: str | None = None  # None: offline rules-v1


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
    }
