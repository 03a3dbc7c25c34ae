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

The steps that are plain SQL (the state, the target, the rows pending, staging, and the switch's checks and its
record of the model) are :class:`ReembedSteps`, written once over a backend's :class:`~memstack.store._sql.Tx`;
a backend adds its lock, its connection and how the staged vectors replace a table's live ones.

Every vector-holding table is one :class:`VectorTable` of :func:`vector_tables`, which each backend's
``VECTOR_TABLES`` is (``store/sqlite/reembed.py``, ``store/postgres/reembed.py``). The dedup threshold is not
stored: it is looked up from the configured embedder's name (:func:`memstack.capture.dedup.params_for`), so a store
reembedded to another model is deduplicated with that model's calibrated parameters (or the conservative ones when
it has none).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

import numpy as np

from memstack.embed import Embedder
from memstack.errors import ConfigError, InputError, ProviderError
from memstack.store._sql import Tx
from memstack.types import ReembedResult, Vector

__all__ = [
    "ARCHIVED_TEXT",
    "DEFAULT_BATCH",
    "ReembedBackend",
    "ReembedState",
    "ReembedSteps",
    "VectorTable",
    "abort",
    "reembed",
    "reembed_state",
    "target_from_meta",
    "vector_tables",
]

T = TypeVar("T")

#: Texts per embedder call (and per staging transaction).
DEFAULT_BATCH = 256

#: How many times the switch may find rows written meanwhile before giving up (each time they are embedded).
_MAX_SWITCH_TRIES = 20

#: Smaller than every row id (ids are 64-bit integers).
_BEFORE_FIRST = -(2**63)

#: The text of one archived message as recall embeds it (:func:`memstack.retrieval.archive.message_text`), in SQL
#: over ``archive_vectors v`` joined to ``session_turns t``.
ARCHIVED_TEXT = "COALESCE(v.speaker || ': ', '') || CASE v.side WHEN 0 THEN t.user_text ELSE t.assistant_text END"


@dataclass(frozen=True, slots=True)
class VectorTable:
    """One table holding vectors. ``source`` is a ``SELECT`` of two columns, ``id`` (the row's integer key) and
    ``text`` (what the vector embeds), over the rows that have a vector."""

    name: str
    id_column: str
    vector_column: str
    source: str


def vector_tables(key: str) -> tuple[VectorTable, ...]:
    """Every table holding vectors, on a backend whose integer key is ``key`` (:attr:`Sql.key
    <memstack.store._sql.Sql.key>`): the reembed re-embeds each of them (add a table here when one is added)."""
    return (
        VectorTable("memories", key, "embedding", f"SELECT {key} AS id, content AS text FROM memories"),
        VectorTable(  # recall's archived messages
            "archive_vectors",
            "seq",
            "embedding",
            f"SELECT v.seq AS id, {ARCHIVED_TEXT} AS text "
            f"FROM archive_vectors v JOIN session_turns t ON t.{key} = v.turn_{key} WHERE v.embedding IS NOT NULL",
        ),
    )


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


def _pending_sql(table: VectorTable) -> str:
    return (
        f"SELECT r.id, r.text FROM ({table.source}) AS r WHERE r.id > ? AND NOT EXISTS "
        "(SELECT 1 FROM reembed_vectors s WHERE s.tbl = ? AND s.row_id = r.id) ORDER BY r.id LIMIT ?"
    )


class ReembedSteps:
    """The steps of a :class:`ReembedBackend` that are plain SQL, over the backend's hooks: its transactions on
    the connection the reembed holds (:meth:`_read`, :meth:`_write`), its meta table (:attr:`meta`), a vector as
    its staging table stores it (:meth:`_stored`), and in the switch's transaction the tables held against writers
    (:meth:`_hold`) and a table's live vectors replaced by the staged ones (:meth:`_replace`)."""

    #: The store's table of ``key``, ``value`` rows that names its model.
    meta: str
    tables: Sequence[VectorTable]

    async def _read(self, body: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        """``body`` over one consistent view (by default, a transaction like a write's)."""
        return await self._write(body)

    async def _write(self, body: Callable[[Tx], Coroutine[Any, Any, T]]) -> T:
        raise NotImplementedError

    def _stored(self, vector: Vector) -> Any:
        raise NotImplementedError

    async def _hold(self, tx: Tx) -> None:
        """Inside the switch's transaction, first: nobody adds or edits rows until it commits."""
        raise NotImplementedError

    async def _replace(self, tx: Tx, table: VectorTable, dim: int) -> None:
        raise NotImplementedError

    async def state(self) -> ReembedState:
        async def read(tx: Tx) -> ReembedState:
            rows = await tx.all(f"SELECT key, value FROM {self.meta} WHERE key IN ('embedder', 'dim')")
            target = await tx.all(
                f"SELECT key, value FROM {self.meta} WHERE key IN ('reembed_embedder', 'reembed_dim')"
            )
            total = 0
            for t in self.tables:
                row = await tx.one(f"SELECT count(*) FROM ({t.source}) AS r")
                total += int(row[0]) if row else 0
            row = await tx.one("SELECT count(*) FROM reembed_vectors")
            staged = int(row[0]) if row else 0
            meta = {str(k): str(v) for k, v in rows}
            return reembed_state(meta, target_from_meta(dict(target)), total=total, staged=staged)

        return await self._read(read)

    async def begin(self, embedder: str | None, dim: int | None) -> None:
        async def write(tx: Tx) -> None:
            await tx.execute(f"DELETE FROM {self.meta} WHERE key IN ('reembed_embedder', 'reembed_dim')")
            if embedder is None or dim is None:
                await tx.execute("DELETE FROM reembed_vectors")
                return
            await tx.execute(
                f"INSERT INTO {self.meta} (key, value) VALUES ('reembed_embedder', ?), ('reembed_dim', ?)",
                (embedder, str(dim)),
            )

        await self._write(write)

    async def pending(self, table: VectorTable, after: int, limit: int) -> list[tuple[int, str]]:
        rows = await self._read(lambda tx: tx.all(_pending_sql(table), (after, table.name, limit)))
        return [(int(i), str(t)) for i, t in rows]

    async def stage(self, table: VectorTable, rows: Sequence[tuple[int, str]], vectors: Vector) -> None:
        params = [(table.name, row_id, text, self._stored(vectors[i])) for i, (row_id, text) in enumerate(rows)]
        await self._write(
            lambda tx: tx.many(
                "INSERT INTO reembed_vectors (tbl, row_id, text, embedding) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tbl, row_id) DO UPDATE SET text = excluded.text, embedding = excluded.embedding",
                params,
            )
        )

    async def switch(self, embedder: str, dim: int) -> bool:
        async def write(tx: Tx) -> bool:
            await self._hold(tx)
            for t in self.tables:
                # Staged vectors of rows deleted or edited since they were staged are dropped (edited rows are
                # then pending again).
                await tx.execute(
                    "DELETE FROM reembed_vectors AS s WHERE s.tbl = ? AND NOT EXISTS "
                    f"(SELECT 1 FROM ({t.source}) AS r WHERE r.id = s.row_id AND r.text = s.text)",
                    (t.name,),
                )
            for t in self.tables:
                if await tx.one(_pending_sql(t), (_BEFORE_FIRST, t.name, 1)):
                    return False
            for t in self.tables:
                await self._replace(tx, t, dim)
            await tx.execute(
                f"DELETE FROM {self.meta} WHERE key IN ('embedder', 'dim', 'reembed_embedder', 'reembed_dim')"
            )
            await tx.execute(
                f"INSERT INTO {self.meta} (key, value) VALUES ('embedder', ?), ('dim', ?)", (embedder, str(dim))
            )
            await tx.execute("DELETE FROM reembed_vectors")
            return True

        return await self._write(write)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        raise NotImplementedError


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
