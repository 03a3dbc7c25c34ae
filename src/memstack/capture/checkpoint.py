"""What a detection job records between its steps (``store.jobs`` checkpoints): the candidates it kept and what
each write did, as JSON-ready dicts, so a resumed job goes on without classifying again or writing twice."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memstack.capture.writer import WriteOutcome
from memstack.types import Candidate, Category, MemoryUpdate

__all__ = ["candidate_from_dict", "candidate_to_dict", "outcome_from_dict", "outcome_to_dict"]


def candidate_to_dict(c: Candidate) -> dict[str, Any]:
    return {
        "content": c.content,
        "category": c.category.value,
        "confidence": c.confidence,
        "explicit": c.explicit,
        "observed_at": c.observed_at.isoformat() if c.observed_at else None,
        "expires_at": c.expires_at.isoformat() if c.expires_at else None,
        "evidence": c.evidence,
        "valid_from": c.valid_from.isoformat() if c.valid_from else None,
    }


def candidate_from_dict(d: Mapping[str, Any]) -> Candidate:
    def when(key: str) -> datetime | None:
        return datetime.fromisoformat(d[key]) if d.get(key) else None

    return Candidate(
        content=str(d["content"]),
        category=Category.parse(str(d["category"])),
        confidence=float(d["confidence"]),
        explicit=bool(d.get("explicit", False)),
        observed_at=when("observed_at"),
        expires_at=when("expires_at"),
        evidence=str(d.get("evidence", "")),
        valid_from=when("valid_from"),
    )


def outcome_to_dict(o: WriteOutcome) -> dict[str, Any]:
    return {"update": o.update.to_dict(), "upgrade_prompt": o.upgrade_prompt, "reason": o.reason}


def outcome_from_dict(d: Mapping[str, Any]) -> WriteOutcome:
    return WriteOutcome(MemoryUpdate.from_dict(d["update"]), d.get("upgrade_prompt"), str(d.get("reason", "")))
