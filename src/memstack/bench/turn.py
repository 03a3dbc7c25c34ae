"""``memstack bench turn``: what a whole chat turn costs memstack itself, model time excluded.

Each turn is ``AsyncMemstack.chat`` with the offline responder as the chat model (it answers at once), on a fresh
SQLite store in a temporary directory, for one user holding ``memories`` memories, all turns in one session (so the
session state, turn log and raw window are read and fed to the context every time). Timed: the ``chat`` call, i.e.
the session lock, the one embedding of the message, layer-6 recall (hybrid: vector + full text), layer-7 lines,
context assembly with the guard and the budget, storing the manifest, the offline reply, and the badge race. With a
real model the detection runs beside the model call; here phase 1 is instant, so the race waits for detection to
finish and its time is part of the figure (an upper bound for the critical path). Phase 2 (summarizing) runs in the
background and is waited for between turns, outside the timing.

``guard``: the content guard (``auto``: the semantic layer with MiniLM, which embeds each text it has not seen, such
as the previous turn's summary; ``rules``: the phrase rules alone).

The last line is one JSON object: turns, memories, embedder, guard, p50_ms, p99_ms, max_ms.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench.capture import NO_SAVE_MESSAGES
from memstack.config import Config
from memstack.evals.common import percentile
from memstack.types import Category, NewMemory, UserRef

__all__ = ["TurnBenchConfig", "run_turn_bench"]

_FACTS = (
    ("User is a sophomore at UCLA studying biology", Category.FACT),
    ("User prefers short explanations with concrete examples", Category.PREFERENCE),
    ("User wants to get into medical school", Category.GOAL),
    ("User learns best from diagrams", Category.LEARNINGSTYLE),
    ("User's organic chemistry midterm is on Thursday", Category.SCHEDULE),
    ("User works part-time at a coffee shop", Category.GENERAL),
)


@dataclass(frozen=True, slots=True)
class TurnBenchConfig:
    turns: int = 200
    memories: int = 200
    embedder: str = "local:minilm"
    warmup: int = 5
    guard: str = "auto"


async def _seed(ms: Any, user: UserRef, count: int) -> None:
    texts = [f"{_FACTS[i % len(_FACTS)][0]} (note {i})" for i in range(count)]
    if not texts:
        return
    vectors = await ms.embedder.embed(texts)
    rows = [NewMemory(t, _FACTS[i % len(_FACTS)][1]) for i, t in enumerate(texts)]
    await ms.store.memories.add_many(user, rows, np.asarray(vectors))


async def run_turn_bench(cfg: TurnBenchConfig) -> dict[str, Any]:
    from memstack.engine import AsyncMemstack, Tuning

    user = UserRef("bench-user")
    with tempfile.TemporaryDirectory(prefix="memstack-bench-turn-") as home:
        config = Config(home=Path(home), embedder=cfg.embedder)  # offline: no model strings from the environment
        async with AsyncMemstack(config, tuning=Tuning(guard=cfg.guard)) as ms:
            await _seed(ms, user, cfg.memories)
            session: str | None = None
            times: list[float] = []
            for i in range(cfg.warmup + cfg.turns):
                message = NO_SAVE_MESSAGES[i % len(NO_SAVE_MESSAGES)]
                await ms.wait_idle()
                started = time.perf_counter()
                result = await ms.chat(user, message, session_id=session, metadata={"tier": "premium"})
                elapsed = (time.perf_counter() - started) * 1000
                session = result.session_id
                if i >= cfg.warmup:
                    times.append(elapsed)
    return {
        "turns": cfg.turns,
        "memories": cfg.memories,
        "embedder": cfg.embedder,
        "guard": cfg.guard,
        "p50_ms": round(percentile(times, 50), 2),
        "p99_ms": round(percentile(times, 99), 2),
        "max_ms": round(max(times), 2),
    }
