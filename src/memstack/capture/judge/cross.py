"""The update judge's cross-encoder: a small transformer that reads a memory and a new statement at once.

A head over two fixed sentence vectors cannot see *which* words of the statement bear on the memory ("hung the
boots up" against "plays football on Sundays"); a cross-encoder reads both texts together
(``[CLS] memory [SEP] statement [SEP]``) and scores how likely the statement makes the memory no longer true.
``scripts/train_update_crossencoder.py`` fine-tunes all-MiniLM-L6-v2 as one on the judge's written pairs and exports
it as int8 ONNX (:data:`MODEL_FILE`). Its card (:data:`CARD_FILE`, read by :func:`load_card`) records the file's
sha256 (a test checks it), the threshold chosen on the development set and how it was trained; the licence notice is
``data/README.md``. Pairs are encoded with the vendored MiniLM tokenizer and its pair template, as in training.

:class:`CrossEncoder` loads nothing until its first score and runs the ONNX session in a thread
(:meth:`CrossEncoder.score`), so the event loop never waits on it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstack.errors import ConfigError

__all__ = [
    "CARD_FILE",
    "MODEL_FILE",
    "Card",
    "CrossEncoder",
    "file_sha256",
    "load_card",
    "shared_cross_encoder",
    "shipped_model",
]

#: The shipped model and its card, under ``memstack/capture/judge/data/``.
MODEL_FILE = "update-crossencoder-int8.onnx"
CARD_FILE = "update-crossencoder.json"

_MAX_TOKENS = 128  # the training length; a memory and a statement are far shorter

Scores = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Card:
    """What is known of the shipped model: its file's ``sha256``, the ``threshold`` from which a score supersedes,
    and ``about`` (training data, development figures, the command that made it)."""

    sha256: str
    threshold: float
    about: dict[str, Any] = field(default_factory=dict)


def shipped_model() -> Path:
    return Path(str(resources.files("memstack.capture.judge") / "data" / MODEL_FILE))


@lru_cache(maxsize=1)
def load_card() -> Card:
    data = json.loads((resources.files("memstack.capture.judge") / "data" / CARD_FILE).read_text(encoding="utf-8"))
    return Card(str(data["sha256"]), float(data["threshold"]), dict(data.get("about", {})))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class CrossEncoder:
    """The int8 ONNX cross-encoder at ``path`` (default: the shipped one); ``threads`` intra-op threads. Nothing is
    read until the first score.

    Each pair is its own run: dynamic int8 quantization scales a run's activations over the whole batch, padding
    included, so a pair batched with others scored up to 0.17 otherwise, and a verdict would depend on what else
    the message said. One short pair is a few milliseconds on one core."""

    def __init__(self, path: Path | None = None, *, threads: int = 1) -> None:
        self._path = path or shipped_model()
        self._threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"crossencoder:{self._path.name}"

    def load(self) -> None:
        """Read the model and its tokenizer now (otherwise the first score does)."""
        with self._lock:
            if self._session is not None:
                return
            if not self._path.is_file():
                raise ConfigError(
                    f"the update judge's cross-encoder {self._path.name} is missing from this install; reinstall "
                    "memstack (pip install --force-reinstall memstack), or choose a model judge with "
                    "MEMSTACK_UPDATE_MODEL"
                )
            import onnxruntime as ort
            from tokenizers import Tokenizer

            vocab = resources.files("memstack.embed") / "data" / "minilm-tokenizer.json"
            tokenizer = Tokenizer.from_str(vocab.read_text(encoding="utf-8"))
            tokenizer.enable_truncation(_MAX_TOKENS)
            tokenizer.no_padding()
            options = ort.SessionOptions()
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(str(self._path), options, providers=["CPUExecutionProvider"])
            self._tokenizer = tokenizer

    def score_sync(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        """One score in 0..1 per ``(memory, statement)`` pair, in order (blocking)."""
        if self._session is None and pairs:
            self.load()
        return np.array([self._run(memory, statement) for memory, statement in pairs], dtype=np.float32)

    def _run(self, memory: str, statement: str) -> float:
        encoding = self._tokenizer.encode(memory, statement)
        feeds = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        return float(self._session.run(None, feeds)[0][0])

    async def score(self, pairs: Sequence[tuple[str, str]]) -> Scores:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        return await asyncio.to_thread(self.score_sync, list(pairs))

    def close(self) -> None:
        with self._lock:
            self._session = None


@lru_cache(maxsize=1)
def shared_cross_encoder() -> CrossEncoder:
    """The process's one instance of the shipped model (every engine's offline judge reads with it)."""
    return CrossEncoder()
