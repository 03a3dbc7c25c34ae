"""``memstack eval capture``: does what memstack stores say what the user said, no more and no less?

The data is JSON Lines, one case per line::

    {"id": "sister-1", "message": "My sister Gina lives in Rome and I visit her every August.",
     "at": "2026-11-27T10:00:00+00:00",
     "points": [{"text": "User's sister Gina lives in Rome.", "keys": ["sister", "Gina", "Rome"],
                 "category": "fact"}],
     "not": ["2027"]}

``message`` is what the user says, ``at`` when (ISO 8601 with its UTC offset: the user's local time), ``points`` the
memories an ideal capture stores (each with the ``keys`` a stored memory must contain to count, alternatives
separated by ``|``, and a category), ``not`` phrases no memory of the case may contain. A case without points is a
message nothing should be kept from.

Every case runs end to end on a fresh user of one engine (a scratch SQLite store): the message is sent with
:meth:`~memstack.engine.AsyncMemstack.chat` at its time (``metadata`` ``local_time`` and ``timezone``: the time
capture reads dates against), the offline responder answers, the configured classifier (offline by default)
detects, the engine waits for its background work, and the user's active memories are read back and scored by
:mod:`memstack.evals.capture_score`.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memstack.config import Config
from memstack.errors import InputError
from memstack.evals.capture_score import CaptureCase, CaseScore, Point, StoredMemory, score_case, summarize
from memstack.evals.common import percentile
from memstack.files import read_text
from memstack.types import Category

__all__ = ["load_cases", "run_capture", "write_report"]

_FIELDS = ("id", "message", "at")


def load_cases(path: Path) -> list[CaptureCase]:
    """The cases of a JSONL file; :class:`~memstack.errors.InputError` naming the line of anything malformed."""
    text = read_text(path, "capture file", hint="pass the file's path with --data")
    cases: list[CaptureCase] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where} is not JSON ({exc}); one case per line") from None
        if not isinstance(row, dict):
            raise InputError(f"{where} holds {type(row).__name__}; a case is an object with {', '.join(_FIELDS)}")
        missing = [f for f in _FIELDS if not isinstance(row.get(f), str) or not row[f].strip()]
        if missing:
            raise InputError(f"{where} lacks {', '.join(missing)} (each a non-empty string)")
        if row["id"] in seen:
            raise InputError(f"{where}: the id {row['id']!r} is used twice")
        seen.add(row["id"])
        cases.append(
            CaptureCase(
                id=row["id"],
                message=row["message"].strip(),
                at=_time(row["at"], where),
                points=tuple(_point(p, f"{where} point {i + 1}") for i, p in enumerate(_list(row, "points", where))),
                avoid=tuple(_phrase(p, f"{where} not") for p in _list(row, "not", where)),
            )
        )
    if not cases:
        raise InputError(f"{path} holds no cases")
    return cases


def _list(row: dict[str, Any], field: str, where: str) -> list[Any]:
    value = row.get(field, [])
    if not isinstance(value, list):
        raise InputError(f"{where}: {field!r} must be a list")
    return value


def _time(raw: str, where: str) -> datetime:
    try:
        at = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise InputError(f"{where}: 'at' {raw!r} is not an ISO 8601 time") from None
    if at.tzinfo is None:
        raise InputError(f"{where}: 'at' {raw!r} has no UTC offset; write it like 2026-11-27T10:00:00+00:00")
    return at


def _phrase(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: every phrase must be a non-empty string")
    return value.strip()


def _point(value: Any, where: str) -> Point:
    if not isinstance(value, dict) or not isinstance(value.get("text"), str) or not value["text"].strip():
        raise InputError(f"{where}: a point is an object with text, keys and category")
    keys = value.get("keys")
    if not isinstance(keys, list) or not keys:
        raise InputError(f"{where}: 'keys' must be a non-empty list of words or phrases")
    try:
        category = Category.parse(str(value.get("category", "")))
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return Point(value["text"].strip(), tuple(_phrase(k, where) for k in keys), category.value)


def write_report(path: Path, outcomes: Sequence[CaseScore]) -> None:
    """Each case's outcome as one JSON line (``--report``): its memories, which points they recall, which are
    distorted and why."""
    path.write_text("".join(json.dumps(o.to_dict(), ensure_ascii=False) + "\n" for o in outcomes), encoding="utf-8")


def _metadata(at: datetime) -> dict[str, str]:
    """The session fields that make ``at`` the message's time: the local time and its offset as the zone."""
    offset = at.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    zone = "UTC" if minutes == 0 else f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return {"local_time": at.isoformat(), "timezone": zone}


async def run_capture(
    cases: Sequence[CaptureCase],
    *,
    embedder: str = "local:minilm",
    classifier: str | None = None,
    models: Any = None,
    progress: Callable[[], None] | None = None,
) -> tuple[dict[str, Any], list[CaseScore]]:
    """Run every case through a chat turn on a fresh user of one engine in a scratch directory; the summary and
    the scored cases.

    ``classifier``: a model string for the LLM classifier (default offline). ``models``: a ready
    :class:`~memstack.turn.models.Models` (tests hand in a classifier on a scripted server)."""
    from memstack.engine import AsyncMemstack

    spec = None if classifier in (None, "offline") else classifier
    given = getattr(models, "classifier", None)
    name = given.name if given is not None else f"llm:{spec}" if spec else "offline:rules-v1"
    with tempfile.TemporaryDirectory(prefix="memstack-eval-capture-") as home:
        config = Config(home=Path(home), embedder=embedder, classifier_model=spec)
        async with AsyncMemstack(config, models=models, resume=False) as ms:
            await ms.chat("eval-capture-warmup", "I like hiking in the hills.")  # models load outside the timings
            await ms.wait_idle()
            outcomes = []
            for number, case in enumerate(cases):
                user = f"eval-capture-{number}"
                start = time.perf_counter()
                await ms.chat(user, case.message, metadata=_metadata(case.at))
                await ms.wait_idle()
                elapsed = round((time.perf_counter() - start) * 1000, 1)
                stored = [StoredMemory(m.content, m.category.value) for m in reversed(await ms.list(user))]
                outcomes.append(score_case(case, stored, ms=elapsed))
                if progress is not None:
                    progress()
    latencies = [o.ms for o in outcomes]
    summary = {
        **summarize(outcomes),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "classifier": name,
    }
    return summary, outcomes
