"""Switching a store's embedding model: ``memstack reembed`` (DESIGN §5), the same on every backend.

A store records the model its vectors were made with and refuses to open with another one. ``reembed`` re-embeds
every stored vector with the new model and only then switches the store, so at every moment the store holds the
vectors of exactly one model:

1. **Lock.** One reembed per store at a time: the backend takes a lock the operating system or the server
   releases when the process dies (an ``flock`` on SQLite, a session advisory lock on PostgreSQL). A second run
   fails at once with :class:`~memstack.errors.StoreBusy`.
2. **Record the target** (``reembed_embedder`` / ``reembed_dim`` in the store's meta table) before the first
   batch. From then on the store refuses to open for normal use with
   :class:`~memstack.errors.ReembedInProgress`; searches never see two models.
3. **Stage.** New vectors go to a staging table (``reembed_vectors``: source table, row id, the text embedded,
   the new vector), never over the live ones, a batch per transaction through the embedder's batch call. The
   rows still to do are those without a staged vector, so a run killed at any point (SIGKILL included) resumes
   where it stopped and recomputes nothing already staged.
4. **Switch**, in one transaction and only when nothing is left: staged vectors whose text changed meanwhile
   (written by a process that opened the store before the reembed began) are dropped and embedded again, rows
   added meanwhile are embedded, then the live vectors are replaced, the meta table names the new model, the
   staging table is emptied. PostgreSQL also changes the columns to ``vector(new_dim)`` and rebuilds the HNSW
   indexes on them; SQLite processes drop their in-memory vectors when they see the commit.

Every vector-holding table is one :class:`VectorTable` in its backend's list (``VECTOR_TABLES`` in
``store/sqlite/reembed.py`` and ``store/postgres/reembed.py``). The dedup threshold is not stored: it is looked
up from the configured embedder's name (:func:`memstack.capture.dedup.params_for`), so a store reembedded to
another model is deduplicated with that model's calibrated parameters (or the conservative ones when it has none).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

import numpy as np

from memstack.embed import Embedder
from memstack.errors import ConfigError, InputError, ProviderError
from memstack.types import ReembedResult, Vector

__all__ = [
    "ARCHIVED_TEXT",
    "DEFAULT_BATCH",
    "ReembedBackend",
    "ReembedState",
    "VectorTable",
    "abort",
    "reembed",
    "reembed_state",
    "target_from_meta",
]

#: Texts per embedder call (and per staging transaction).
DEFAULT_BATCH = 256

#: How many times the switch may find rows written meanwhile before giving up (each time they are embedded).
_MAX_SWITCH_TRIES = 20

#: Smaller than every row id (ids are 64-bit integers).
_BEFORE_FIRST = -(2**63)

#: The text of one archived message as recall embeds it (:func:`memstack.retrieval.archive.message_text`), in SQL
#: over ``archive_vectors v`` joined to ``session_turns t``: the same on both backends' ``VECTOR_TABLES``.
ARCHIVED_TEXT = "COALESCE(v.speaker || ': ', '') || CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END"


@dataclass(frozen=True, slots=True)
class VectorTable:
    """One table holding vectors. ``source`` is a ``SELECT`` of two columns, ``id`` (the row's integer key) and
    ``text`` (what the vector embeds), over the rows that have a vector."""

    name: str
    id_column: str
    vector_column: str
    source: str


@dataclass(frozen=True, slots=True)
class ReembedState:
    """Where a store stands: its model (``None`` before first use), the model a reembed in progress is switching
    to (``None`` when none is), and per table how many vectors there are and how many are staged."""

    embedder: str | None
    dim: int | None
    target: str | None
    target_dim: int | None
    total: int
    staged: int


def target_from_meta(meta: Mapping[str, Any]) -> tuple[str, int] | None:
    """The model a reembed in progress is switching to, from the ``reembed_embedder`` / ``reembed_dim`` rows of a
    store's meta table (key to value), or ``None``."""
    if "reembed_embedder" not in meta:
        return None
    return str(meta["reembed_embedder"]), int(meta.get("reembed_dim", 0))


def reembed_state(meta: Mapping[str, Any], target: tuple[str, int] | None, *, total: int, staged: int) -> ReembedState:
    """The state of a store whose meta table holds ``meta`` (its ``embedder`` and ``dim`` rows) and whose reembed
    target is ``target``."""
    return ReembedState(
        embedder=meta.get("embedder"),
        dim=int(meta["dim"]) if "dim" in meta else None,
        target=target[0] if target else None,
        target_dim=target[1] if target else None,
        total=total,
        staged=staged,
    )


class ReembedBackend(Protocol):
    """One store, opened for reembedding (it holds the reembed lock until closed)."""

    @property
    def where(self) -> str:
        """The store, for messages (a path or ``user@host/db``)."""
        ...

    @property
    def tables(self) -> Sequence[VectorTable]: ...

    async def state(self) -> ReembedState: ...

    async def begin(self, embedder: str | None, dim: int | None) -> None:
        """Record the target model (or with ``None``: forget it and empty the staging table)."""
        ...

    async def pending(self, table: VectorTable, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` ``(id, text)`` rows of ``table`` with ``id > after`` and no staged vector, by id."""
        ...

    async def stage(self, table: VectorTable, rows: Sequence[tuple[int, str]], vectors: Vector) -> None:
        """Keep the new vectors of ``rows`` in the staging table (one transaction)."""
        ...

    async def switch(self, embedder: str, dim: int) -> bool:
        """Replace the live vectors with the staged ones and record the model, in one transaction; ``False`` (and
        nothing switched) when rows are still missing a staged vector."""
        ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...


def _check_vectors(vectors: Vector, rows: int, dim: int, name: str) -> Vector:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape != (rows, dim):
        raise ProviderError(
            f"the embedder {name!r} returned shape {matrix.shape} for {rows} texts, not ({rows}, {dim})"
        )
    if not np.isfinite(matrix).all():
        raise ProviderError(f"the embedder {name!r} returned non-finite numbers; nothing was stored")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vector = (matrix / norms).astype(np.float32)
    return out


async def reembed(
    backend: ReembedBackend,
    embedder: Embedder,
    *,
    batch: int = DEFAULT_BATCH,
    on_batch: Callable[[int, int], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> ReembedResult:
    """Re-embed every vector of ``backend``'s store with ``embedder``, then switch the store to it.

    ``on_start(total, already_staged)`` is called once before the first batch, ``on_batch(rows, batches_so_far)``
    after each staged batch (a progress bar; an exception raised there stops the run, which resumes later).
    Returns at once, with ``switched=False``, when the store already uses ``embedder``."""
    if batch < 1:
        raise InputError(f"batch must be at least 1 text, got {batch}")
    start = time.perf_counter()
    name, dim = embedder.name, embedder.dim
    state = await backend.state()
    if state.target is not None and (state.target, state.target_dim) != (name, dim):
        raise ConfigError(
            f"a reembed of {backend.where} to {state.target!r} ({state.target_dim}-d) is in progress; finish it with "
            f"`memstack reembed --to {state.target}`, or discard it with `memstack reembed --abort` before switching "
            f"to {name!r}"
        )
    if state.target is None and (state.embedder, state.dim) == (name, dim):
        return ReembedResult(name, dim, name, dim, 0, 0, round(time.perf_counter() - start, 3), switched=False)
    if state.target is None:
        await backend.begin(name, dim)  # recorded before the first batch: the store now refuses normal use
    if on_start is not None:
        on_start(state.total, state.staged)
    vectors = batches = 0
    for _ in range(_MAX_SWITCH_TRIES):
        for table in backend.tables:
            after = _BEFORE_FIRST
            while rows := await backend.pending(table, after, batch):
                matrix = _check_vectors(await embedder.embed([text for _, text in rows]), len(rows), dim, name)
                await backend.stage(table, rows, matrix)
                after = rows[-1][0]
                vectors += len(rows)
                batches += 1
                if on_batch is not None:
                    on_batch(len(rows), batches)
        if await backend.switch(name, dim):
            seconds = round(time.perf_counter() - start, 3)
            return ReembedResult(name, dim, state.embedder, state.dim, vectors, batches, seconds, resumed=state.staged)
    raise ConfigError(
        f"rows kept arriving in {backend.where} while it was being switched to {name!r}; stop the processes that "
        "still use it with the old model, then run `memstack reembed` again (nothing staged is lost)"
    )


async def abort(backend: ReembedBackend) -> ReembedState:
    """Discard a reembed in progress: the store goes back to its previous model. Returns the state before."""
    state = await backend.state()
    if state.target is not None:
        await backend.begin(None, None)
    return state
