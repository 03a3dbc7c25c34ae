"""Benchmark of context assembly alone: no model, no embeddings, no store.

One request = the default agent (top_k raised to every candidate, so the budget does the cutting), a full session
layer, a delegated task, 12 facts, ``memories`` scored candidates, 8 summaries, 20 turn-log lines, a ``thread`` of
user / assistant / tool messages and the current message, under a ``budget``-token limit. Texts are generated here
from a fixed seed.

* **warm**: the same request again and again, as on consecutive turns where the thread and the user's memories
  recur: token counts and guard verdicts come from their caches.
* **cold**: every request's texts are new (a unique marker in each), so every fragment is counted and scanned.

Both are in the same JSON line: ``p50_ms`` / ``p99_ms`` (warm) beside ``cold_p50_ms`` / ``cold_p99_ms``, with the
machine's load average (``load_avg``). Wall-clock percentiles are the figures; CPU-time percentiles (this thread
only) are printed beside them because other processes on a shared machine stretch wall-clock time.
``manifest_p50_ms`` is the cost of building the manifest and fragments on first access, which the engine does after
the model call.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from memstack.context import (
    ContextRequest,
    DelegatedTask,
    MemoryHit,
    SummaryLine,
    assemble,
    build_session,
    default_agent,
)
from memstack.context.agent import MemorySettings
from memstack.guard import RULES, ContentGuard
from memstack.types import Category, Fact, RawMessage, TurnSummary

__all__ = ["make_request", "run"]

_SUBJECTS = (
    "biology",
    "the marathon",
    "her sister",
    "the move to Lyon",
    "Python 3.11",
    "the quarterly report",
    "a sourdough starter",
    "the piano recital",
    "his landlord",
    "the MCAT",
    "a trip to Kyoto",
    "the garden",
)
_VERBS = (
    "prefers",
    "is preparing for",
    "worries about",
    "asked twice about",
    "is excited about",
    "finished",
    "keeps notes on",
    "wants reminders about",
    "is learning",
    "has a deadline for",
)
_DETAILS = (
    "every Tuesday evening",
    "before the end of the month",
    "with a focus on practical examples",
    "and would like short summaries",
    "after work, around 7pm",
    "using a spaced-repetition deck",
    "because it matters for the new job",
    "on weekends only",
    "with metric units",
    "in plain language",
)


def _sentence(rng: random.Random, marker: str, words: int) -> str:
    base = f"The user {rng.choice(_VERBS)} {rng.choice(_SUBJECTS)} {rng.choice(_DETAILS)}"
    filler = " ".join(rng.choice(_DETAILS).split()[0] + " " + rng.choice(_SUBJECTS) for _ in range(words // 4))
    return f"{base}{marker}. {filler}".strip()


def make_request(seed: int, *, memories: int, thread: int, budget: int, model: str, marker: str = "") -> ContextRequest:
    rng = random.Random(seed)
    start = datetime(2025, 3, 1, tzinfo=UTC)
    agent = default_agent()
    agent = replace(agent, memory=MemorySettings(True, top_k=memories, keep_top=3), fingerprint=agent.fingerprint)
    roles = ("user", "assistant", "user", "assistant", "tool", "assistant")
    return ContextRequest(
        message="Can you remind me what I planned for tomorrow and whether it clashes with the recital?",
        agent=agent,
        session=build_session(
            {
                "timezone": "Europe/Paris",
                "local_time": "2025-03-14T18:05:00",
                "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 "
                "(KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1",
                "location": {"city": "Lyon", "country": "France"},
                "tier": "pro",
                "coins": 120,
                "tenant": "acme",
                "flags": ["beta_ui"],
            }
        ),
        delegated=DelegatedTask(
            "Check the user's calendar entries for conflicts and answer in two sentences.",
            {"calendar": [f"2025-03-15 19:00 piano recital{marker}", "2025-03-15 08:00 long run"]},
        ),
        facts=tuple(Fact(_sentence(rng, marker, 8), hard_exception=i < 2, since_turn=i) for i in range(12)),
        memories=tuple(
            MemoryHit(f"mem_{i:04d}", _sentence(rng, marker, 12), rng.choice(list(Category)).value, rng.random())
            for i in range(memories)
        ),
        summaries=tuple(
            SummaryLine(f"sum_{i}", _sentence(rng, marker, 10), start + timedelta(days=i)) for i in range(8)
        ),
        turn_log=tuple(TurnSummary(i + 1, _sentence(rng, marker, 8), _sentence(rng, marker, 10)) for i in range(20)),
        thread=tuple(
            RawMessage(roles[i % len(roles)], _sentence(rng, marker, 60 + (i % 5) * 30), turn=20 + i // 2)
            for i in range(thread)
        ),
        budget_tokens=budget,
        model=model,
    )


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def run(
    *,
    iterations: int = 300,
    memories: int = 200,
    thread: int = 60,
    budget: int = 16_000,
    model: str,
    guard: ContentGuard | None = None,
) -> dict[str, Any]:
    """``guard``: the content guard of every assembly (default: phrase rules); a semantic guard embeds each new text,
    so its cold figures include the embedding."""
    guard = guard or RULES
    warm_request = make_request(1, memories=memories, thread=thread, budget=budget, model=model)
    for _ in range(5):
        ctx = assemble(warm_request, guard=guard)
    warm, warm_cpu = [], []
    for _ in range(iterations):
        c0, t0 = time.thread_time(), time.perf_counter()
        ctx = assemble(warm_request, guard=guard)
        warm.append((time.perf_counter() - t0) * 1000)
        warm_cpu.append((time.thread_time() - c0) * 1000)

    cold_requests = [
        make_request(1, memories=memories, thread=thread, budget=budget, model=model, marker=f" (#{i})")
        for i in range(iterations)
    ]
    cold, cold_cpu = [], []
    for request in cold_requests:
        c0, t0 = time.thread_time(), time.perf_counter()
        assemble(request, guard=guard)
        cold.append((time.perf_counter() - t0) * 1000)
        cold_cpu.append((time.thread_time() - c0) * 1000)
    manifest_ms = []
    for request in cold_requests[:50]:
        built = assemble(request, guard=guard)
        t0 = time.perf_counter()
        _ = built.manifest, built.fragments
        manifest_ms.append((time.perf_counter() - t0) * 1000)

    statuses = [entry.status.value for entry in ctx.manifest.entries]
    return {
        "bench": "context",
        "p50_ms": round(statistics.median(warm), 3),
        "p99_ms": round(_percentile(warm, 0.99), 3),
        "cold_p50_ms": round(statistics.median(cold), 3),
        "cold_p99_ms": round(_percentile(cold, 0.99), 3),
        "cpu_p50_ms": round(statistics.median(warm_cpu), 3),
        "cpu_p99_ms": round(_percentile(warm_cpu, 0.99), 3),
        "cold_cpu_p50_ms": round(statistics.median(cold_cpu), 3),
        "cold_cpu_p99_ms": round(_percentile(cold_cpu, 0.99), 3),
        "manifest_p50_ms": round(statistics.median(manifest_ms), 3),
        "iterations": iterations,
        "budget_tokens": budget,
        "memories": memories,
        "thread_messages": thread,
        "fragments": len(statuses),
        "kept": statuses.count("kept"),
        "trimmed": statuses.count("trimmed"),
        "tokens": ctx.tokens,
        "candidate_tokens": sum(entry.tokens for entry in ctx.manifest.entries),
        "encoding": ctx.manifest.encoding,
        "guard": guard.name,
        "load_avg": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
