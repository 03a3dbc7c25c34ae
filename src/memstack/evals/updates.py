"""``memstack eval updates``: does a user's news supersede the memory it replaces, and only that one?

The data is JSON Lines, one case per line::

    {"id": "move-1", "kind": "update", "memory": "User lives in Paris.", "category": "fact",
     "message": "I moved to Berlin last month."}
    {"id": "sister-1", "kind": "compatible", "memory": "User lives in Paris.", "category": "fact",
     "message": "My sister moved to Berlin."}

``memory`` is what the user already has (stored explicitly, as ``AsyncMemstack.add`` does), ``category`` its
category, ``message`` what the user then says in a chat. ``kind`` is ``update`` when the message replaces the
memory (moved, new job, ended relationship, changed plan or date, no longer true, a changed preference) and
``compatible`` when it only adds beside it (someone else's news, a second hobby, a visit).

Every case runs end to end on a fresh user of one engine (a scratch SQLite store): the memory is added, the message
sent with :meth:`~memstack.engine.AsyncMemstack.chat` (the offline responder answers; the configured classifier,
offline by default, detects), the engine waits for its background work, and the store is read back. The old
memory counts as **superseded** when it is no longer active with its original text (superseded in place with
history, or soft-deleted); the news counts as **stored** when an active memory other than the original text came
from the turn. An update is **applied** when both hold; a compatible case is a failure when the old memory was
superseded.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memstack.config import Config
from memstack.errors import InputError
from memstack.evals.common import percentile
from memstack.files import read_text
from memstack.types import Category, HistoryAction

__all__ = ["KINDS", "CaseOutcome", "UpdateCase", "load_cases", "run_updates", "score", "write_report"]

KINDS = ("update", "compatible")
_FIELDS = ("id", "kind", "memory", "category", "message")


@dataclass(frozen=True, slots=True)
class UpdateCase:
    id: str
    kind: str  # "update" or "compatible"
    memory: str
    category: Category
    message: str


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """What one case did. ``superseded``: the old memory is no longer active with its original text;
    ``stored``: the news is in an active memory (other than the original text); ``badge``: the chat's
    ``memory_updates`` actions; ``note``: the history note of the change (why it was made), if any."""

    id: str
    kind: str
    superseded: bool
    stored: bool
    ms: float
    badge: tuple[str, ...] = ()
    memories: tuple[str, ...] = ()
    note: str = ""

    @property
    def applied(self) -> bool:
        return self.superseded and self.stored

    @property
    def correct(self) -> bool:
        return self.applied if self.kind == "update" else not self.superseded

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "applied": self.applied, "correct": self.correct}


def load_cases(path: Path) -> list[UpdateCase]:
    """The cases of a JSONL file; :class:`~memstack.errors.InputError` naming the line of anything malformed."""
    text = read_text(path, "updates file", hint="pass the file's path with --data")
    cases: list[UpdateCase] = []
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
        if row["kind"] not in KINDS:
            raise InputError(f"{where}: kind {row['kind']!r} is not one of {', '.join(KINDS)}")
        if row["id"] in seen:
            raise InputError(f"{where}: the id {row['id']!r} is used twice")
        seen.add(row["id"])
        try:
            category = Category.parse(row["category"])
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        cases.append(UpdateCase(row["id"], row["kind"], row["memory"].strip(), category, row["message"].strip()))
    if not cases:
        raise InputError(f"{path} holds no cases")
    return cases


def write_report(path: Path, outcomes: Sequence[CaseOutcome]) -> None:
    """Each case's outcome as one JSON line (``--report``)."""
    path.write_text("".join(json.dumps(o.to_dict(), ensure_ascii=False) + "\n" for o in outcomes), encoding="utf-8")


def score(outcomes: Sequence[CaseOutcome], *, classifier: str = "", judge: str = "") -> dict[str, Any]:
    """The summary line: counts, rates and latency percentiles of ``outcomes``."""
    updates = [o for o in outcomes if o.kind == "update"]
    compatible = [o for o in outcomes if o.kind == "compatible"]
    applied = sum(o.applied for o in updates)
    latencies = [o.ms for o in outcomes]
    return {
        "cases": len(outcomes),
        "updates": len(updates),
        "updates_applied": applied,
        "update_rate": round(applied / len(updates), 4) if updates else 0.0,
        "updates_superseded": sum(o.superseded for o in updates),
        "updates_stored": sum(o.stored for o in updates),
        "updates_badge": sum("updated" in o.badge for o in updates),
        "compatible": len(compatible),
        "compatible_superseded": sum(o.superseded for o in compatible),
        "compatible_stored": sum(o.stored for o in compatible),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "classifier": classifier,
        "judge": judge,
    }


async def run_updates(
    cases: Sequence[UpdateCase],
    *,
    embedder: str = "local:minilm",
    classifier: str | None = None,
    update_model: str | None = None,
    models: Any = None,
    progress: Callable[[], None] | None = None,
) -> tuple[dict[str, Any], list[CaseOutcome]]:
    """Run every case through a chat turn on a fresh engine in a scratch directory; the summary and the outcomes.

    ``classifier``: a model string for the LLM classifier (default offline). ``update_model``: the update judge's
    setting (default: the engine's, which follows the classifier). ``models``: a ready
    :class:`~memstack.turn.models.Models` (tests hand in a classifier or a judge on a scripted server)."""
    from memstack.engine import AsyncMemstack

    spec = None if classifier in (None, "offline") else classifier
    given = getattr(models, "classifier", None)
    name = given.name if given is not None else f"llm:{spec}" if spec else "offline:rules-v1"
    with tempfile.TemporaryDirectory(prefix="memstack-eval-updates-") as home:
        config = Config(home=Path(home), embedder=embedder, classifier_model=spec, update_model=update_model)
        judged = getattr(models, "updates", None)
        setting = config.update_judge
        judge = judged.name if judged is not None else setting if setting.startswith("offline") else f"llm:{setting}"
        async with AsyncMemstack(config, models=models, resume=False) as ms:
            await _warm(ms)
            outcomes = []
            for number, case in enumerate(cases):
                outcomes.append(await _run_case(ms, f"eval-updates-{number}", case))
                if progress is not None:
                    progress()
    return score(outcomes, classifier=name, judge=judge), outcomes


async def _warm(ms: Any) -> None:
    """One turn before the measured ones: the embedder and the classifier's exemplars load outside them."""
    await ms.chat("eval-updates-warmup", "I like hiking in the hills.")
    await ms.wait_idle()


async def _run_case(ms: Any, user: str, case: UpdateCase) -> CaseOutcome:
    old = await ms.add(user, case.memory, category=case.category)
    start = time.perf_counter()
    result = await ms.chat(user, case.message)
    await ms.wait_idle()
    elapsed = (time.perf_counter() - start) * 1000
    now = await ms.get(user, old.id)
    superseded = not now.is_active or now.content != old.content
    active = await ms.list(user)
    stored = any(m.content != old.content and m.source_turn_ids for m in active)
    notes = [e.note for e in await ms.history(user, old.id) if e.action is not HistoryAction.CREATE and e.note]
    return CaseOutcome(
        id=case.id,
        kind=case.kind,
        superseded=superseded,
        stored=stored,
        ms=round(elapsed, 1),
        badge=tuple(u.action.value for u in result.memory_updates),
        memories=tuple(m.content for m in active),
        note=notes[-1] if notes else "",
    )
