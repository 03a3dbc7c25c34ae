"""``memstack eval extraction``: save-worthiness detection on LoCoMo conversations.

Every turn is classified as if its speaker were the user and the session date the message time; the turn counts
as "saved" when the classifier returns at least one candidate. Gold save-worthy turns are those cited by the
conversation's ``observation`` entries (malformed ids such as ``D8:6; D9:17`` or ``D30:05`` are normalised to
``D<session>:<turn>``).
"""

from __future__ import annotations

import json
import re
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

__all__ = ["Turn", "evaluate", "load_turns", "normalize_dia_ids", "parse_session_time"]

_DIA = re.compile(r"D:?(\d+):0*(\d+)")
_SESSION = re.compile(r"^session_(\d+)$")
_WHEN = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.IGNORECASE)
_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}


@dataclass(frozen=True, slots=True)
class Turn:
    conversation: str
    dia_id: str
    speaker: str
    text: str
    at: datetime
    recent: tuple[tuple[str, str], ...]  # earlier turns of the session as (role, text), this speaker = "user"
    gold: bool


def normalize_dia_ids(raw: str | Sequence[str]) -> list[str]:
    """``"D8:6; D9:17"`` → ``["D8:6", "D9:17"]``, ``"D:11:26"`` → ``["D11:26"]``, ``"D30:05"`` → ``["D30:5"]``."""
    items = [raw] if isinstance(raw, str) else list(raw)
    return [f"D{s}:{t}" for item in items for s, t in _DIA.findall(str(item))]


def parse_session_time(raw: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → an aware datetime (UTC: LoCoMo gives no zone)."""
    m = _WHEN.search(raw)
    if m is None:
        raise InputError(f"unrecognised session date {raw!r}; expected like '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, month, year = m.groups()
    month_no = _MONTHS.get(month[:3].lower())
    if month_no is None:
        raise InputError(f"unrecognised month in session date {raw!r}")
    h = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return datetime(int(year), month_no, int(day), h, int(minute), tzinfo=UTC)


def _gold_ids(conv: dict[str, Any]) -> set[str]:
    gold: set[str] = set()
    for per_session in (conv.get("observation") or {}).values():
        for facts in (per_session or {}).values():
            for fact in facts:
                if isinstance(fact, list | tuple) and len(fact) >= 2:
                    gold.update(normalize_dia_ids(fact[1]))
    return gold


def load_turns(path: Path, *, context_turns: int = 2) -> list[Turn]:
    """Every turn of every conversation in a LoCoMo JSON file, in order."""
    require_file(path, "LoCoMo file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not JSON ({exc}); pass a LoCoMo file such as locomo10.json") from None
    if not isinstance(data, list):
        raise InputError(f"{path} should hold a list of conversations")
    turns: list[Turn] = []
    for index, conv in enumerate(data):
        if not isinstance(conv, dict) or "conversation" not in conv:
            raise InputError(f"conversation {index} of {path} has no 'conversation' field")
        name = str(conv.get("sample_id", index))
        gold = _gold_ids(conv)
        sessions = conv["conversation"]
        numbers = sorted(int(m.group(1)) for key in sessions if (m := _SESSION.match(key)))
        for n in numbers:
            at = parse_session_time(str(sessions.get(f"session_{n}_date_time", "")))
            history: list[tuple[str, str]] = []
            for turn in sessions[f"session_{n}"]:
                speaker, text = str(turn.get("speaker", "")), str(turn.get("text", ""))
                ids = normalize_dia_ids(str(turn.get("dia_id", "")))
                dia_id = ids[0] if ids else str(turn.get("dia_id", ""))
                recent = tuple(("user" if s == speaker else "assistant", t) for s, t in history[-context_turns:])
                turns.append(Turn(name, dia_id, speaker, text, at, recent, dia_id in gold))
                history.append((speaker, text))
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
