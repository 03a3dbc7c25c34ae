"""``memstack bench sessions``: thousands of concurrent chat sessions with a slow model, in one process.

``sessions`` sessions of one tenant each play ``turns`` turns in order, all at once, through ``AsyncMemstack.chat``
against a chat model that takes ``model_delay_s`` to answer (the scripted OpenAI-compatible server of
:mod:`memstack_testing`, over real HTTP), on PostgreSQL with a pool of ``pool`` connections (an embedded server
unless ``MEMSTACK_DATABASE_URL`` names one) or on SQLite. Meanwhile a user of another tenant chats one turn after
another with a model that answers at once (a quick chat): its latencies are memstack's alone, and show whether the
busy tenant starves it.

Checked, not just timed: every turn's reply is for its own message and carries the turn number it was sent as,
and afterwards every session's archive holds its messages once each, in the order they were sent (``order_ok``).

The last line is one JSON object: backend, sessions, turns, model_delay_s, pool, errors (and the first few error
messages), order_ok, turn latency p50/p99/max and the overhead over the model's delay, the other tenant's turns
and latencies, elapsed seconds, the pool (its bound, the connections it opened, the mean wait for one), peak
RSS and the load average.
"""

from __future__ import annotations

import asyncio
import os
import resource
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memstack.bench._fakes import need_fakes
from memstack.config import Config
from memstack.errors import MemstackError
from memstack.evals.common import percentile
from memstack.types import UserRef

__all__ = ["SessionsBenchConfig", "run_sessions_bench"]

#: The other tenant's user, and what they say, one turn after another; their model answers at once (a quick chat).
_OTHER_TENANT = UserRef("other-user", tenant="other-tenant")
_OTHER_MESSAGE = "And what about sea charts?"


@dataclass(frozen=True, slots=True)
class SessionsBenchConfig:
    backend: Literal["sqlite", "postgres"] = "postgres"
    sessions: int = 1000
    turns: int = 2
    model_delay_s: float = 10.0
    pool: int = 20
    guard: str = "rules"


def _message(session: int, turn: int) -> str:
    return f"Session {session}, message {turn}: what should I read next about the history of maps?"


@asynccontextmanager
async def _database(cfg: SessionsBenchConfig, database_url: str | None) -> AsyncIterator[str | None]:
    if cfg.backend == "sqlite":
        yield None
    elif database_url is not None:
        yield database_url
    else:
        need_fakes()
        from memstack_testing.postgres import EmbeddedPostgres

        with EmbeddedPostgres(settings={"max_connections": "200"}) as server:
            yield server.create_database("memstack_bench")


async def run_sessions_bench(cfg: SessionsBenchConfig, *, database_url: str | None = None) -> dict[str, Any]:
    from memstack.engine import AsyncMemstack, Models, Tuning

    need_fakes("the scripted OpenAI server", "")
    from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

    def answer(request: RecordedRequest) -> Reply:
        said = request.last_user_message
        return Reply.text(f"Noted: {said}").after(0.0 if said == _OTHER_MESSAGE else cfg.model_delay_s)

    errors: list[str] = []
    latencies: list[float] = []
    other: list[float] = []
    order_ok = True
    async with _database(cfg, database_url) as url, ScriptedOpenAIServer() as server:
        server.handle(answer)
        with tempfile.TemporaryDirectory(prefix="memstack-bench-sessions-") as home:
            config = Config(home=Path(home), database_url=url, pool_size=cfg.pool)
            model = server.chat_model("bench-chat")
            async with AsyncMemstack(config, models=Models(chat=model), tuning=Tuning(guard=cfg.guard)) as ms:
                await ms.chat(UserRef("warm-up"), "Hello there.")  # load the embedder and the tokenizer
                running = True

                async def session(n: int) -> None:
                    nonlocal order_ok
                    user = UserRef(f"user-{n}", tenant="busy-tenant")
                    sid = f"bench-session-{n}"
                    for turn in range(1, cfg.turns + 1):
                        message = _message(n, turn)
                        started = time.perf_counter()
                        try:
                            result = await ms.chat(user, message, session_id=sid)
                        except MemstackError as exc:
                            errors.append(f"{type(exc).__name__}: {exc}")
                            return
                        latencies.append(time.perf_counter() - started)
                        if result.turn != turn or result.reply != f"Noted: {message}":
                            order_ok = False

                async def other_tenant() -> None:
                    sid = None
                    while running:
                        started = time.perf_counter()
                        try:
                            result = await ms.chat(_OTHER_TENANT, _OTHER_MESSAGE, session_id=sid)
                        except MemstackError as exc:
                            errors.append(f"other tenant: {type(exc).__name__}: {exc}")
                            return
                        sid = result.session_id
                        other.append(time.perf_counter() - started)

                began = time.perf_counter()
                watcher = asyncio.create_task(other_tenant())
                await asyncio.gather(*(session(n) for n in range(cfg.sessions)))
                elapsed = time.perf_counter() - began
                running = False
                await watcher
                await ms.wait_idle(120)
                order_ok = order_ok and await _archives_in_order(ms, cfg)
                pool = _pool(ms)
    overhead = [s - cfg.model_delay_s for s in latencies]
    return {
        "backend": cfg.backend,
        "sessions": cfg.sessions,
        "turns": cfg.turns,
        "model_delay_s": cfg.model_delay_s,
        "guard": cfg.guard,
        "errors": len(errors),
        "error_samples": errors[:3],
        "order_ok": order_ok,
        "turn_p50_s": round(percentile(latencies, 50), 3),
        "turn_p99_s": round(percentile(latencies, 99), 3),
        "turn_max_s": round(max(latencies, default=0.0), 3),
        "overhead_p50_s": round(percentile(overhead, 50), 3),
        "overhead_p99_s": round(percentile(overhead, 99), 3),
        "other_tenant_turns": len(other),
        "other_tenant_p50_s": round(percentile(other, 50), 3),
        "other_tenant_p99_s": round(percentile(other, 99), 3),
        "other_tenant_max_s": round(max(other, default=0.0), 3),
        "elapsed_s": round(elapsed, 1),
        **pool,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_avg": round(os.getloadavg()[0], 2),
    }


async def _archives_in_order(ms: Any, cfg: SessionsBenchConfig) -> bool:
    for n in range(cfg.sessions):
        user = UserRef(f"user-{n}", tenant="busy-tenant")
        turns = await ms.store.archive.turns(user, session_id=f"bench-session-{n}", limit=cfg.turns + 1)
        if [t.user for t in turns] != [_message(n, i) for i in range(1, cfg.turns + 1)]:
            return False
    return True


def _pool(ms: Any) -> dict[str, Any]:
    """The PostgreSQL pool's bound, the connections it opened in all, and the mean wait for one (empty on SQLite)."""
    stats = ms.store.pool_stats() if hasattr(ms.store, "pool_stats") else None
    if not stats:
        return {}
    asked = max(int(stats.get("requests_num", 0)), 1)
    return {
        "pool_max": stats.get("pool_max"),
        "pool_connections_opened": stats.get("connections_num"),
        "pool_wait_mean_ms": round(int(stats.get("requests_wait_ms", 0)) / asked, 2),
        "pool_requests": stats.get("requests_num"),
    }
