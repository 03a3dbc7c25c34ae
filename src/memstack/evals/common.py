"""Helpers shared by the eval commands: binary metrics, percentiles, a stderr progress bar, data-file checks (LoCoMo
files are read by :mod:`memstack.evals.locomo_data`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memstack.errors import InputError

__all__ = [
    "BinaryScores",
    "Progress",
    "binary_scores",
    "emit",
    "percentile",
    "progress",
    "require_file",
]


@dataclass(frozen=True, slots=True)
class BinaryScores:
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


def binary_scores(predicted: Sequence[bool], gold: Sequence[bool]) -> BinaryScores:
    if len(predicted) != len(gold):
        raise InputError(f"{len(predicted)} predictions for {len(gold)} gold labels; they must pair up")
    tp = sum(p and g for p, g in zip(predicted, gold, strict=True))
    fp = sum(p and not g for p, g in zip(predicted, gold, strict=True))
    fn = sum(g and not p for p, g in zip(predicted, gold, strict=True))
    return BinaryScores(tp, fp, fn, len(gold) - tp - fp - fn)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of a non-empty sequence; 0.0 for an empty one."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        raise InputError(f"{what} not found at {str(path)!r}; pass the file's path with --data")
    return path


def emit(obj: dict[str, Any]) -> None:
    """Print one JSON object on its own line of stdout."""
    print(json.dumps(obj, ensure_ascii=False), flush=True)


class Progress(Protocol):
    def advance(self, n: int = 1) -> None: ...


class _RichProgress:
    def __init__(self, bar: Any, task: Any) -> None:
        self._bar = bar
        self._task = task

    def advance(self, n: int = 1) -> None:
        self._bar.advance(self._task, n)


@contextmanager
def progress(description: str, total: int, *, enabled: bool = True) -> Iterator[Progress]:
    """A progress bar on stderr (so stdout stays machine-readable)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.progress import Progress as RichProgress

    console = Console(stderr=True, file=sys.stderr, quiet=not enabled)
    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with RichProgress("[progress.description]{task.description}", *columns, console=console, transient=True) as bar:
        yield _RichProgress(bar, bar.add_task(description, total=total))
