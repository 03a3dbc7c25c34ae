"""What the benchmarks built on the engine print beside their figures, measured in the same run.

* **The machine's load** (:class:`Load`): the 1-minute load average when the run starts and when it ends. Figures
  taken while other work competes for the cores are slower than the code is; the two numbers say how busy the
  machine was, so a figure is read with its load.
* **The raw limit** a figure is measured against: what the embedder alone does with the same texts, since every
  turn, import and search embeds at least once. :func:`embed_batch_rate` is its throughput on a batch (texts per
  second: an import cannot go faster than embedding each of its messages once), :func:`embed_each_ms` its time for
  one text at a time (a turn cannot take less than embedding its message). Both call the embedder beneath the
  engine's batching queue, and the embedder keeps no cache, so every text is embedded for real: a limit measured on
  texts seen before is not a limit. :func:`warm_embedder` loads the model first, untimed, on a text of its own.
* **The store**: :func:`database` gives the run a store of the backend asked for: SQLite in the run's temporary home
  (``None``), an embedded PostgreSQL started for the run, or the server of ``database_url`` (use a scratch
  database: the run writes to it).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from memstack.bench._fakes import need_fakes
from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.evals.common import percentile

__all__ = [
    "Load",
    "database",
    "embed_batch_rate",
    "embed_each_ms",
    "load_average",
    "ms_figures",
    "ratio",
    "raw_embedder",
    "warm_embedder",
]

BACKENDS = ("sqlite", "postgres")


def load_average() -> float | None:
    """The machine's 1-minute load average (``None`` where the system has none)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


@dataclass(slots=True)
class Load:
    """The load average when the run started (at creation) and, from :meth:`as_json`, when it ended."""

    start: float | None = field(default_factory=load_average)

    def as_json(self) -> dict[str, float | None]:
        return {"load_avg_start": self.start, "load_avg_end": load_average()}


def check_backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; use sqlite or postgres")


@asynccontextmanager
async def database(backend: str, database_url: str | None, name: str) -> AsyncIterator[str | None]:
    """The ``database_url`` of the run's store: ``None`` for SQLite, else ``database_url`` or a database ``name`` on
    an embedded PostgreSQL server started for the run (needs the ``testing`` extra)."""
    check_backend(backend)
    if backend == "sqlite" or database_url is not None:
        yield database_url if backend == "postgres" else None
        return
    need_fakes()
    from memstack_testing.postgres import EmbeddedPostgres

    with EmbeddedPostgres() as server:
        yield server.create_database(name)


def raw_embedder(embedder: Embedder) -> Embedder:
    """The model itself, beneath the engine's batching queue (:class:`~memstack.embed.batching.BatchingEmbedder`)."""
    inner = getattr(embedder, "inner", None)
    return inner if isinstance(inner, Embedder) else embedder


async def warm_embedder(embedder: Embedder) -> None:
    """Load the model (its first call), untimed, on a text no benchmark times."""
    await raw_embedder(embedder).embed(["the embedder's first call loads its model"])


async def embed_batch_rate(embedder: Embedder, texts: Sequence[str]) -> float:
    """Texts per second: ``texts`` embedded in one call, as the model batches them itself."""
    if not texts:
        raise InputError("no texts to embed for the embedder's limit")
    started = time.perf_counter()
    await raw_embedder(embedder).embed(list(texts))
    return len(texts) / max(time.perf_counter() - started, 1e-9)


async def embed_each_ms(embedder: Embedder, texts: Sequence[str]) -> list[float]:
    """Milliseconds to embed each text alone, one call after the other."""
    raw, out = raw_embedder(embedder), []
    for text in texts:
        started = time.perf_counter()
        await raw.embed([text])
        out.append((time.perf_counter() - started) * 1000)
    return out


def ratio(value: float, limit: float) -> float | None:
    """``value / limit`` to three places (``None`` when the limit is zero)."""
    return round(value / limit, 3) if limit > 0 else None


def ms_figures(prefix: str, times: Sequence[float]) -> dict[str, float]:
    """``{prefix}p50_ms``, ``{prefix}p99_ms``, ``{prefix}max_ms`` of ``times`` (milliseconds)."""
    if not times:
        raise InputError(f"no {prefix or 'timed '}samples to summarize")
    return {
        f"{prefix}p50_ms": round(percentile(list(times), 50), 2),
        f"{prefix}p99_ms": round(percentile(list(times), 99), 2),
        f"{prefix}max_ms": round(max(times), 2),
    }


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else 0.0
