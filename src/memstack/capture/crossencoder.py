"""The dedup cross-encoder step: a small transformer that reads a pair of texts at once and scores "duplicate".

Embedding cosine compares two sentences through two fixed vectors; a cross-encoder reads both at once
(``[CLS] candidate [SEP] existing [SEP]``) and so sees which words differ. ``scripts/train_dedup_crossencoder.py``
fine-tunes all-MiniLM-L6-v2 on STS-B train as one and exports it as int8 ONNX; :class:`CrossEncoder` runs such a
file. Pairs are encoded with the vendored MiniLM tokenizer (``memstack/embed/data/minilm-tokenizer.json``, the same
vocabulary) and its pair template, as in training.

**No model ships today** (:data:`MODEL_SHA256` is ``None``): the one trained within this machine's budget (top 3
of 6 layers, 3 epochs, int8) scored below the feature rule on held-out STS-B train pairs, blended or alone, so the
dedup rule keeps its features (``data/README.md`` has the figures). The step stays wired: a model installed as
``data/`` :data:`MODEL_FILE`, with its hash recorded here and its :class:`~memstack.capture.dedup.CrossParams` in
``CALIBRATED``, is used by the rule for ``local:minilm``, which falls back to its features when the file is missing.

:class:`CrossEncoder` loads nothing until its first score; :meth:`CrossEncoder.score` runs the ONNX session in a
thread, one batch per call, so the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memstack.errors import ConfigError

__all__ = [
    "MODEL_FILE",
    "MODEL_SHA256",
    "CrossEncoder",
    "PairScorer",
    "file_sha256",
    "shared_cross_encoder",
    "shipped_model",
]

#: The shipped model's file name under ``memstack/capture/data/`` and its sha256 (a test checks they match);
#: ``None``: no model ships.
MODEL_FILE = "dedup-crossencoder-int8.onnx"
MODEL_SHA256: str | None = None

_MAX_TOKENS = 128  # the training length; STS-B pairs and memories are far shorter

Scores = npt.NDArray[np.float32]


class PairScorer(Protocol):
    """Scores pairs of texts in 0..1 (1: the same fact). ``score`` must not block the event loop."""

    @property
    def name(self) -> str: ...

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> Scores: ...

    async def score(self, pairs: Sequence[tuple[str, str]]) -> Scores: ...

    async def aclose(self) -> None: ...


def shipped_model() -> Path | None:
    """The path of the shipped model file, or ``None`` when it is missing from this install."""
    path = Path(str(resources.files("memstack.capture") / "data" / MODEL_FILE))
    return path if path.is_file() else None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class CrossEncoder:
    """The int8 ONNX cross-encoder at ``path`` (default: the shipped one); ``threads`` intra-op threads,
    ``batch_size`` pairs per ONNX run. Nothing is read until the first score."""

    def __init__(self, path: Path | None = None, *, threads: int = 1, batch_size: int = 32) -> None:
        self._path = path
        self._threads = threads
        self._batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"crossencoder:{(self._path.name if self._path else MODEL_FILE)}"

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            path = self._path or shipped_model()
            if path is None or not path.is_file():
                raise ConfigError(
                    f"the dedup cross-encoder {MODEL_FILE} is missing from this install; reinstall memstack, or "
                    "build it with scripts/train_dedup_crossencoder.py (the dedup rule falls back to its features)"
                )
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:  # pragma: no cover - dependencies of the base install
                raise ConfigError(f"the dedup cross-encoder needs {exc.name}: pip install memstack") from exc
            vocab = resources.files("memstack.embed") / "data" / "minilm-tokenizer.json"
            tokenizer = Tokenizer.from_str(vocab.read_text(encoding="utf-8"))
            tokenizer.enable_truncation(_MAX_TOKENS)
            tokenizer.enable_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            self._tokenizer = tokenizer

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        """Blocking variant for batch jobs (evals): one score per pair, in order."""
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        if self._session is None:
            self._load()
        # short pairs together: less padding per batch
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._run([pairs[i] for i in idx])
        return out

    def _run(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        encodings = self._tokenizer.encode_batch([(a, b) for a, b in pairs])
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        scores: Scores = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32).reshape(len(pairs))
        return scores

    async def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        return await asyncio.to_thread(self.score_sync, list(pairs))

    async def aclose(self) -> None:
        self._session = None


_shared: CrossEncoder | None = None
_shared_lock = threading.Lock()


def shared_cross_encoder() -> CrossEncoder | None:
    """One process-wide :class:`CrossEncoder` over the shipped model (its session is loaded once, on first use), or
    ``None`` when the model file is missing."""
    global _shared
    with _shared_lock:
        if _shared is None:
            path = shipped_model()
            if path is None:
                return None
            _shared = CrossEncoder(path)
        return _shared
