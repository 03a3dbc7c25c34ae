"""``memstack eval extraction``: save-worthiness detection on LoCoMo conversations.

Every turn is classified as if its speaker were the user and the session date the message time; the turn counts
as "saved" when the classifier returns at least one candidate. Gold save-worthy turns are those cited by the
conversation's ``observation`` entries (ids normalised to ``D<session>:<turn>`` by
:func:`memstack.evals.locomo_data.dia_ids`). A turn that shares a photo is classified with its caption, as the
import of ``memstack eval locomo`` passes it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstack.capture.base import Classifier, ClassifyContext
from memstack.capture.rules import might_disclose
from memstack.errors import InputError
from memstack.evals.common import binary_scores, percentile, progress, require_file
from memstack.evals.locomo_data import read_locomo

__all__ = ["Turn", "evaluate", "load_turns"]


@dataclass(frozen=True, slots=True)
class Turn:
    conversation: str
    dia_id: str
    speaker: str
    text: str
    at: datetime
    recent: tuple[tuple[str, str], ...]  # earlier turns of the session as (role, text), this speaker = "user"
    gold: bool


def load_turns(path: Path, *, context_turns: int = 2) -> list[Turn]:
    """Every turn of every conversation in a LoCoMo JSON file, in order (a shared photo as its caption, as
    :mod:`memstack.evals.locomo_data` reads it); gold when an observation cites it."""
    require_file(path, "LoCoMo file")
    turns: list[Turn] = []
    for conv in read_locomo(path):
        gold = {e for o in conv.observations for e in o.evidence}
        for session in conv.sessions:
            at = session[0].at.replace(tzinfo=UTC)  # LoCoMo gives no zone
            history: list[tuple[str, str]] = []
            for turn in session:
                recent = tuple(("user" if s == turn.speaker else "assistant", t) for s, t in history[-context_turns:])
                turns.append(Turn(conv.id, turn.id, turn.speaker, turn.content, at, recent, turn.id in gold))
                history.append((turn.speaker, turn.content))
    if not turns:
        raise InputError(f"{path} holds no turns")
    return turns


async def evaluate(classifier: Classifier, turns: Sequence[Turn], *, show_progress: bool = True) -> dict[str, Any]:
    """Classify every turn; the summary holds the contract keys and a ``detail`` breakdown."""
    predicted: list[bool] = []
    latencies: list[float] = []
    empty_latencies: list[float] = []
    categories: Counter[str] = Counter()
    # warm-up: load the model and exemplars outside the measured calls
    await classifier.classify("I love hiking.", at=turns[0].at)
    with progress(f"classifying {len(turns)} turns", len(turns), enabled=show_progress) as bar:
        for turn in turns:
            start = time.perf_counter()
            candidates = await classifier.classify(turn.text, at=turn.at, context=ClassifyContext(recent=turn.recent))
            elapsed = (time.perf_counter() - start) * 1000
            latencies.append(elapsed)
            if not candidates:
                empty_latencies.append(elapsed)
            predicted.append(bool(candidates))
            categories.update(c.category.value for c in candidates)
            bar.advance()
    failures = len(getattr(classifier, "failures", ()))
    gold = [t.gold for t in turns]
    scores = binary_scores(predicted, gold)
    everything = binary_scores([True] * len(turns), gold)
    return {
        "turns": len(turns),
        **scores.as_dict(),
        "p50_ms": round(percentile(latencies, 50), 3),
        "p99_ms": round(percentile(latencies, 99), 3),
        "detail": {
            "classifier": classifier.name,
            "gold_positive": sum(gold),
            "predicted_positive": sum(predicted),
            "tp": scores.tp,
            "fp": scores.fp,
            "fn": scores.fn,
            "categories": dict(categories.most_common()),
            "no_save_turns": len(empty_latencies),
            "no_save_p50_ms": round(percentile(empty_latencies, 50), 3),
            "no_save_p99_ms": round(percentile(empty_latencies, 99), 3),
            "fast_path_share": round(sum(not might_disclose(t.text) for t in turns) / len(turns), 4),
            "baseline_save_all": everything.as_dict(),
            "failures": failures,
        },
    }
