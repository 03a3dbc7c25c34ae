"""``memstack bench turn``: what a whole chat turn costs memstack itself, model time excluded.

Each turn is ``AsyncMemstack.chat`` with the offline responder as the chat model (it answers at once), on a fresh
SQLite store in a temporary directory. Timed: the ``chat`` call, i.e. the session lock, the one embedding of the
message, layer-6 recall (hybrid: vector + full text), layer-7 lines, context assembly with the guard and the budget,
storing the manifest, the offline reply, and the badge race. With a real model the detection runs beside the model
call; here phase 1 is instant, so the race waits for detection to finish and its time is part of the figure (an
upper bound for the critical path). Phase 2 (summarizing) runs in the background and is waited for between turns,
outside the timing.

Two figures, from the same run:

* **cold** (``cold_p50_ms``, ``cold_p99_ms`` over ``cold_users``): the first turn of each of ``cold_users`` users,
  each holding ``memories`` memories of their own (texts no other user has), in a new session: nothing of theirs
  is cached yet (their vectors are read from the store, the guard and the token counter meet their memories for
  the first time). They are the engine's first turns after it opened; ``first_ms`` is the very first (it also
  pays for what is done once per process: the first model runs, the agent's prompt counted and scanned).
* **warm** (``p50_ms``, ``p99_ms``, ``max_ms``): one more user holding ``memories`` memories, ``turns`` turns in one
  session after ``warmup`` untimed ones (so the session state, turn log and raw window are read and fed to the
  context every time): the steady state of a conversation. Each message is new (one of a set of 30 with the turn's
  number appended), as in a real conversation: its embedding and the guard's look at it are never cached; the
  user's memories and the engine are.

``guard``: the content guard (``auto``: the semantic layer with MiniLM, which embeds each text it has not seen, such
as the previous turn's summary; ``rules``: the phrase rules alone).

The last line is one JSON object: turns, memories, embedder, guard, p50_ms, p99_ms, max_ms, cold_users, first_ms,
cold_p50_ms, cold_p99_ms, load_avg.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench.capture import NO_SAVE_MESSAGES
from memstack.config import Config
from memstack.errors import InputError
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
    cold_users: int = 20

    def __post_init__(self) -> None:
        if self.turns < 1 or self.cold_users < 1 or self.memories < 0:
            raise InputError("turns and cold users must be at least 1, memories at least 0")


async def _seed(ms: Any, user: UserRef, count: int, *, tag: str = "") -> None:
    """``count`` memories for ``user``, embedded with the engine's model; ``tag`` makes their texts the user's own."""
    texts = [f"{_FACTS[i % len(_FACTS)][0]} ({tag}note {i})" for i in range(count)]
    if not texts:
        return
    vectors = await ms.embedder.embed(texts)
    rows = [NewMemory(t, _FACTS[i % len(_FACTS)][1]) for i, t in enumerate(texts)]
    await ms.store.memories.add_many(user, rows, np.asarray(vectors))


async def run_turn_bench(cfg: TurnBenchConfig) -> dict[str, Any]:
    from memstack.engine import AsyncMemstack, Tuning

    user = UserRef("bench-user")
    newcomers = [UserRef(f"bench-cold-{n}") for n in range(cfg.cold_users)]
    with tempfile.TemporaryDirectory(prefix="memstack-bench-turn-") as home:
        config = Config(home=Path(home), embedder=cfg.embedder)  # offline: no model strings from the environment
        async with AsyncMemstack(config, tuning=Tuning(guard=cfg.guard)) as ms:
            for n, newcomer in enumerate(newcomers):
                await _seed(ms, newcomer, cfg.memories, tag=f"user {n}, ")
            await _seed(ms, user, cfg.memories)
            cold: list[float] = []
            for n, newcomer in enumerate(newcomers):
                message = NO_SAVE_MESSAGES[n % len(NO_SAVE_MESSAGES)]
                await ms.wait_idle()
                started = time.perf_counter()
                await ms.chat(newcomer, message, metadata={"tier": "premium"})
                cold.append((time.perf_counter() - started) * 1000)
            session: str | None = None
            times: list[float] = []
            for i in range(cfg.warmup + cfg.turns):
                message = f"{NO_SAVE_MESSAGES[i % len(NO_SAVE_MESSAGES)]} ({i})"  # a text of its own, nothing to save
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
        "cold_users": len(cold),
        "first_ms": round(cold[0], 2),
        "cold_p50_ms": round(percentile(cold, 50), 2),
        "cold_p99_ms": round(percentile(cold, 99), 2),
        "load_avg": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
