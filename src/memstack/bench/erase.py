"""``memstack bench erase``: how long ``AsyncMemstack.erase`` takes for a user with ``memories`` memories.

Each run writes a fresh user (``memories`` memories, each with its history, plus ``turns`` chat turns of an
imported conversation: sessions, turn log, archive and vectors) beside ``others`` other users holding ``per_other``
memories each (they make the shared tables, and SQLite's full-text indexes, the size of a store in use), then times
the erasure alone. The median and every run are reported, in seconds.

The store is SQLite in a temporary directory, or an embedded PostgreSQL (``backend="postgres"``; or the server of
``database_url``: use a scratch database). The embedder is ``hash:64`` (the erasure does not depend on it).

The last line of ``--json`` is one JSON object: ``backend``, ``memories``, ``turns``, ``others``, ``per_other``,
``runs`` (seconds each), ``median_s``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench._fakes import need_fakes
from memstack.config import Config
from memstack.types import NewMemory, UserRef

__all__ = ["EraseConfig", "run_erase"]


@dataclass(frozen=True, slots=True)
class EraseConfig:
    backend: str = "sqlite"
    memories: int = 1000
    turns: int = 50
    others: int = 200
    per_other: int = 100
    runs: int = 5


@asynccontextmanager
async def _database(cfg: EraseConfig, database_url: str | None) -> AsyncIterator[str | None]:
    if cfg.backend == "sqlite" or database_url is not None:
        yield database_url
        return
    need_fakes()
    from memstack_testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as server:
        yield server.create_database("memstack_erase")


def _texts(rng: np.random.Generator, n: int, words: list[str]) -> list[str]:
    return [" ".join(rng.choice(words, size=10)) for _ in range(n)]


async def run_erase(cfg: EraseConfig, *, database_url: str | None = None) -> dict[str, Any]:
    from memstack.engine import AsyncMemstack

    rng = np.random.default_rng(0)
    words = [f"word{i}" for i in range(5000)]
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memstack-bench-erase-") as home:
        async with _database(cfg, database_url) as url:
            config = Config(home=Path(home), embedder="hash:64", database_url=url)
            async with AsyncMemstack(config) as ms:
                store, dim = ms.store, ms.embedder.dim
                for n in range(cfg.others):
                    other = UserRef(f"other-{n}", tenant="bench")
                    texts = _texts(rng, cfg.per_other, words)
                    vectors = rng.standard_normal((len(texts), dim)).astype(np.float32)
                    await store.memories.add_many(other, [NewMemory(t) for t in texts], vectors)
                start = datetime(2025, 1, 1, tzinfo=UTC)
                for run in range(cfg.runs):
                    user = UserRef(f"erased-{run}", tenant="bench")
                    texts = _texts(rng, cfg.memories, words)
                    vectors = rng.standard_normal((len(texts), dim)).astype(np.float32)
                    await store.memories.add_many(user, [NewMemory(t) for t in texts], vectors)
                    if cfg.turns:
                        said = [
                            {"role": role, "content": text, "at": start + timedelta(minutes=i)}
                            for i, text in enumerate(_texts(rng, 2 * cfg.turns, words))
                            for role in ("user" if i % 2 == 0 else "assistant",)
                        ]
                        await ms.ingest(user, "imported", said, capture=False)
                    await ms.wait_idle()
                    began = time.perf_counter()
                    await ms.erase(user)
                    times.append(time.perf_counter() - began)
    return {
        "backend": cfg.backend,
        "memories": cfg.memories,
        "turns": cfg.turns,
        "others": cfg.others,
        "per_other": cfg.per_other,
        "runs": [round(t, 4) for t in times],
        "median_s": round(statistics.median(times), 4),
    }
