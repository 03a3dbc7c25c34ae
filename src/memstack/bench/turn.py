"""``memstack bench turn``: what a whole chat turn costs memstack itself, model time excluded.

Each turn is ``AsyncMemstack.chat`` with the offline responder as the chat model (it answers at once), on a fresh
store (SQLite in a temporary directory, or PostgreSQL with ``backend="postgres"``). Timed: the ``chat`` call, i.e.
the session lock, the one embedding of the message, layer-6 recall (hybrid: vector + full text), layer-7 lines,
context assembly with the guard and the budget, storing the manifest, the offline reply, and the badge race. With a
real model the detection runs beside the model call; here phase 1 is instant, so the race waits for detection to
finish and its time is part of the figure (an upper bound for the critical path). Phase 2 (summarizing) runs in the
background and is waited for between turns, outside the timing.

Two kinds of turn, each cold and warm:

* **no-save** turns (``p50_ms``…): messages with nothing to remember (questions and requests), as most are;
  ``no_save_saved`` counts those that stored something all the same (0 for a valid run);
* **saving** turns (``save_p50_ms``…): a first-person statement that memory capture stores, each naming someone
  new ("My cousin Rolumi moved to Lisbon last month."), so detection embeds its candidate, asks for its nearest
  memories, runs the update judge and the dedup, and inserts it, all before the reply (the badge). ``saved`` and
  ``save_cold_saved`` count the turns that did store a memory.

And four figures of each kind:

* **warm** (``p50_ms``, ``p99_ms``, ``max_ms``; ``save_…``): one more user holding ``memories`` memories, ``turns``
  (``save_turns``) turns in one session after ``warmup`` untimed ones, so the session's state, turn log and raw
  window are read and assembled every time: the steady state of a conversation. Every message is a text of its own,
  as in a real conversation: its embedding and the guard's reading of it are never cached; the user's memories and
  the engine are. Each message names something new (:mod:`memstack.bench._talk`), so no sentence of it was seen
  before either. The vectors of texts embedded moments ago (:mod:`memstack.embed.recent`) are dropped before every
  turn: the seeded memories were embedded when seeded, in a real conversation long before; a turn shares only what
  it embedded itself.
* **a user's first turn** (``cold_p50_ms``, ``cold_p99_ms`` over ``cold_users``; ``save_cold_…``): the first turn
  of each of ``cold_users`` users, each holding ``memories`` memories of their own (texts no other user has), in a
  new session: nothing of theirs is cached yet. The engine has served two untimed turns (one of each kind) of a user
  of its own before them, so these are a user's first turns, not the process's.
* **the engine's first turn** (``first_ms``, ``first_runs_ms``, ``open_ms``): a new process opens an engine on the
  same store (``open_ms``: ``AsyncMemstack.open``, after the imports) and times its first turn once ``open`` has
  returned, for a user of its own: the models load (the embedder's ONNX session, the guard's head, the tokenizer;
  the judge's cross-encoder loads when a user first has memories to judge), nothing is cached. A new process each
  time, ``first_runs`` times (``first_ms`` is the median), since an engine opened again in this process would find
  them loaded.

``stages`` says where each group's time went, as shares of the ``chat`` call's time (the mean over the group's
turns), from the stage timings every turn records (:class:`~memstack.types.TurnTimings`, on the manifest the turn
returns): ``session``, ``queue``, ``embed``, ``recall``, ``guard``, ``assemble``, ``model``, ``write``,
``detection``, ``other`` (within the turn, named by no stage) and ``outside`` (the ``chat`` call around the turn:
its fence, checks and event plumbing); ``stages_ms`` gives the same as mean milliseconds.

The limit (``limit_embed_p50_ms``): the embedder alone embedding each warm message once, one text a call, after the
turns (a turn cannot take less: it embeds its message); ``p50_over_limit`` and ``save_p50_over_limit`` are the warm
p50s over it. ``load_avg_start`` and ``load_avg_end``: the machine's load (``load_avg`` is the end, as before).

The process's garbage collector is kept as ``memstack serve`` keeps it (``gc_freeze_s``, 10 s: collect the young,
freeze the rest, :mod:`memstack.collector`), since a served turn runs under that policy; ``--gc-freeze-s 0`` leaves
the collector alone, as an application that embeds the engine and does nothing about it. Without the policy, a
full collection walking the warm process's heap lands in one turn in a hundred or so and is most of the warm p99.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench._measure import (
    Load,
    check_backend,
    database,
    embed_each_ms,
    ms_figures,
    ratio,
    warm_embedder,
)
from memstack.bench._talk import Names, no_save_message, saving_message
from memstack.collector import keep_collector
from memstack.config import Config
from memstack.errors import InputError, MemstackError
from memstack.evals.common import percentile
from memstack.types import Category, ChatResult, NewMemory, TurnTimings, UserRef

__all__ = ["TurnBenchConfig", "run_turn_bench", "seed_memories"]

_FACTS = (
    ("User is a sophomore at UCLA studying biology", Category.FACT),
    ("User prefers short explanations with concrete examples", Category.PREFERENCE),
    ("User wants to get into medical school", Category.GOAL),
    ("User learns best from diagrams", Category.LEARNINGSTYLE),
    ("User's organic chemistry midterm is on Thursday", Category.SCHEDULE),
    ("User works part-time at a coffee shop", Category.GENERAL),
)
_META = {"tier": "premium"}  # no tier limit in the way of the saving turns
STAGES = (*TurnTimings(0.0).stages(), "other", "outside")


@dataclass(frozen=True, slots=True)
class TurnBenchConfig:
    turns: int = 200
    memories: int = 200
    embedder: str = "local:minilm"
    warmup: int = 5
    guard: str = "auto"
    cold_users: int = 20
    save_turns: int = 100
    first_runs: int = 3
    backend: str = "sqlite"
    gc_freeze_s: float | None = 10.0  # the collector policy of ``memstack serve`` (memstack.collector); None: none

    def __post_init__(self) -> None:
        if min(self.turns, self.cold_users, self.save_turns, self.first_runs) < 1 or self.memories < 0:
            raise InputError("turns, save turns, cold users and first runs must be at least 1, memories at least 0")
        check_backend(self.backend)


async def seed_memories(ms: Any, user: UserRef, count: int, *, tag: str = "") -> None:
    """``count`` memories for ``user``, embedded with the engine's model; ``tag`` makes their texts the user's own."""
    texts = [f"{_FACTS[i % len(_FACTS)][0]} ({tag}note {i})" for i in range(count)]
    if not texts:
        return
    vectors = await ms.embedder.embed(texts)
    rows = [NewMemory(t, _FACTS[i % len(_FACTS)][1]) for i, t in enumerate(texts)]
    await ms.store.memories.add_many(user, rows, np.asarray(vectors))


@dataclass(slots=True)
class _Group:
    """The timed turns of one kind: the ``chat`` call's milliseconds and the stage timings each turn recorded."""

    wall: list[float]
    timings: list[TurnTimings]
    saved: int = 0

    def add(self, wall_ms: float, result: ChatResult) -> None:
        self.wall.append(wall_ms)
        if result.manifest is not None and result.manifest.timings is not None:
            self.timings.append(result.manifest.timings)
        if result.badge:
            self.saved += 1

    def stages_ms(self) -> dict[str, float]:
        means = {s: statistics.fmean(getattr(t, f"{s}_ms") for t in self.timings) for s in STAGES[:-1]}
        means["outside"] = max(0.0, statistics.fmean(self.wall) - statistics.fmean(t.total_ms for t in self.timings))
        return {s: round(v, 3) for s, v in means.items()}

    def shares(self) -> dict[str, float]:
        wall = statistics.fmean(self.wall)
        return {s: round(v / wall, 4) for s, v in self.stages_ms().items()}


async def _chat(ms: Any, group: _Group | None, user: UserRef, message: str, session: str | None) -> str:
    await ms.wait_idle()  # the previous turn's background work is not this turn's
    ms.embedder.forget_recent()  # the user's memories were embedded moments ago, when seeded: not in a real turn
    started = time.perf_counter()
    result = await ms.chat(user, message, session_id=session, metadata=_META)
    if group is not None:
        group.add((time.perf_counter() - started) * 1000, result)
    return str(result.session_id)


async def run_turn_bench(cfg: TurnBenchConfig, *, database_url: str | None = None) -> dict[str, Any]:
    """The benchmark (see the module docstring), under the collector policy ``cfg.gc_freeze_s`` names."""
    load = Load()
    names = Names(np.random.default_rng(0))
    rng = np.random.default_rng(1)
    groups = {name: _Group([], []) for name in ("warm", "cold", "save", "save_cold")}
    warm_messages: list[str] = []
    keeper = asyncio.create_task(keep_collector(cfg.gc_freeze_s)) if cfg.gc_freeze_s else None
    try:
        first, limit = await _run(cfg, database_url, names, rng, groups, warm_messages)
    finally:
        if keeper is not None:
            keeper.cancel()
            gc.unfreeze()
    return _summary(cfg, groups, first, limit, load)


async def _run(
    cfg: TurnBenchConfig,
    database_url: str | None,
    names: Names,
    rng: np.random.Generator,
    groups: dict[str, _Group],
    warm_messages: list[str],
) -> tuple[list[dict[str, Any]], float]:
    """The turns of :func:`run_turn_bench`, timed into ``groups``; the first turns in new processes and the
    embedder's own time for a message."""
    from memstack.engine import AsyncMemstack, Tuning

    cold_users = [UserRef(f"bench-cold-{n}") for n in range(cfg.cold_users)]
    save_cold_users = [UserRef(f"bench-save-cold-{n}") for n in range(cfg.cold_users)]
    first_users = [UserRef(f"bench-first-{n}") for n in range(cfg.first_runs)]
    user, saver, opener = UserRef("bench-user"), UserRef("bench-saver"), UserRef("bench-opener")
    with tempfile.TemporaryDirectory(prefix="memstack-bench-turn-") as home:
        async with database(cfg.backend, database_url, "memstack_bench_turn") as url:
            config = Config(home=Path(home), embedder=cfg.embedder, database_url=url)  # no model strings from env
            async with AsyncMemstack(config, tuning=Tuning(guard=cfg.guard)) as ms:
                everyone = [*cold_users, *save_cold_users, *first_users, user, saver, opener]
                for someone in everyone:
                    await seed_memories(ms, someone, cfg.memories, tag=f"{someone.user_id}, ")
                first = [
                    await _first_turn_in_new_process(config, cfg.guard, who, no_save_message(rng, names()))
                    for who in first_users
                ]
                # untimed, a turn of each kind for a user of its own: what the process loads once is not a user's
                await _chat(ms, None, opener, "Hello! What can you help me with today?", None)
                await _chat(ms, None, opener, saving_message(rng, names()), None)
                for newcomer in cold_users:
                    await _chat(ms, groups["cold"], newcomer, no_save_message(rng, names()), None)
                for newcomer in save_cold_users:
                    await _chat(ms, groups["save_cold"], newcomer, saving_message(rng, names()), None)
                session: str | None = None
                for i in range(cfg.warmup + cfg.turns):
                    message = no_save_message(rng, names())  # a text of its own, to its every sentence
                    warm_messages.append(message)
                    session = await _chat(ms, groups["warm"] if i >= cfg.warmup else None, user, message, session)
                session = None
                for i in range(cfg.warmup + cfg.save_turns):
                    message = saving_message(rng, names())
                    session = await _chat(ms, groups["save"] if i >= cfg.warmup else None, saver, message, session)
                await warm_embedder(ms.embedder)
                limit = percentile(await embed_each_ms(ms.embedder, warm_messages[cfg.warmup :]), 50)
    return first, limit


def _summary(
    cfg: TurnBenchConfig, groups: dict[str, _Group], first: Sequence[dict[str, Any]], limit: float, load: Load
) -> dict[str, Any]:
    warm, cold, save, save_cold = groups["warm"], groups["cold"], groups["save"], groups["save_cold"]
    first_ms = [run["first_ms"] for run in first]
    first_group = _Group(first_ms, [TurnTimings(**run["timings"]) for run in first if run["timings"]])
    every = {"warm": warm, "cold": cold, "save": save, "save_cold": save_cold, "first": first_group}
    ends = load.as_json()
    return {
        "turns": cfg.turns,
        "memories": cfg.memories,
        "embedder": cfg.embedder,
        "guard": cfg.guard,
        "backend": cfg.backend,
        **ms_figures("", warm.wall),
        "cold_users": len(cold.wall),
        "first_ms": round(statistics.median(first_ms), 2),
        "cold_p50_ms": round(percentile(cold.wall, 50), 2),
        "cold_p99_ms": round(percentile(cold.wall, 99), 2),
        "save_turns": cfg.save_turns,
        **ms_figures("save_", save.wall),
        "saved": save.saved,
        "no_save_saved": warm.saved + cold.saved,
        "save_cold_p50_ms": round(percentile(save_cold.wall, 50), 2),
        "save_cold_p99_ms": round(percentile(save_cold.wall, 99), 2),
        "save_cold_saved": save_cold.saved,
        "first_runs_ms": [round(t, 2) for t in first_ms],
        "open_ms": round(statistics.median(run["open_ms"] for run in first), 2),
        "limit_embed_p50_ms": round(limit, 3),
        "p50_over_limit": ratio(percentile(warm.wall, 50), limit),
        "save_p50_over_limit": ratio(percentile(save.wall, 50), limit),
        "stages": {name: g.shares() for name, g in every.items() if g.timings},
        "stages_ms": {name: g.stages_ms() for name, g in every.items() if g.timings},
        "load_avg": ends["load_avg_end"],
        **ends,
        "gc_freeze_s": cfg.gc_freeze_s,
    }


# --- the engine's first turn, in a process of its own ---------------------------------------------------------------

_CHILD = "import sys; from memstack.bench.turn import first_turn_main; first_turn_main(sys.argv[1])"


async def _first_turn_in_new_process(config: Config, guard: str, user: UserRef, message: str) -> dict[str, Any]:
    """Run :func:`first_turn_main` in a new Python process on the same store; what it measured."""
    order = {
        "home": str(config.home),
        "embedder": config.embedder,
        "database_url": config.database_url,
        "guard": guard,
        "user": user.user_id,
        "message": message,
    }
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CHILD, json.dumps(order), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await child.communicate()
    if child.returncode != 0:
        raise MemstackError(f"the engine's first turn failed in its own process: {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


def first_turn_main(order_json: str) -> None:
    """In a new process: open an engine and time its first turn; print what was measured as one JSON line."""
    order = json.loads(order_json)
    started = time.perf_counter()
    from memstack.engine import AsyncMemstack, Tuning

    imported = time.perf_counter()

    async def first() -> dict[str, Any]:
        config = Config(home=Path(order["home"]), embedder=order["embedder"], database_url=order["database_url"])
        ms = AsyncMemstack(config, tuning=Tuning(guard=order["guard"]))
        opening = time.perf_counter()
        await ms.open()
        opened = time.perf_counter()
        try:
            result = await ms.chat(UserRef(order["user"]), order["message"], metadata=_META)
            done = time.perf_counter()
        finally:
            await ms.aclose()
        timings = result.manifest.timings if result.manifest is not None else None
        return {
            "import_ms": (imported - started) * 1000,
            "open_ms": (opened - opening) * 1000,
            "first_ms": (done - opened) * 1000,
            "timings": {k: v for k, v in timings.to_dict().items() if k != "other_ms"} if timings else None,
        }

    print(json.dumps(asyncio.run(first())))
