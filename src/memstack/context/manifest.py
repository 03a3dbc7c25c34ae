"""The manifest: what the model saw for one response, fragment by fragment.

Every fragment of an assembly is listed with its layer, source id, tokens, status (kept | trimmed | quarantined),
flags and the reason for its status. It is JSON-able (:meth:`Manifest.to_dict` / :meth:`Manifest.from_dict`) so a
store can keep it per response and ``memstack context explain --context ID`` can show it later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstack.errors import InputError
from memstack.types import FragmentStatus

__all__ = ["Manifest", "ManifestEntry"]


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    layer: str
    source: str
    tokens: int
    status: FragmentStatus
    flags: tuple[str, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The wire form of ``memstack context render --json``: layer, source, tokens, status, flags."""
        return {
            "layer": self.layer,
            "source": self.source,
            "tokens": self.tokens,
            "status": self.status.value,
            "flags": list(self.flags),
        }


@dataclass(frozen=True, slots=True)
class Manifest:
    context_id: str
    created_at: datetime
    agent: str
    fingerprint: str
    model: str | None
    encoding: str
    budget_tokens: int
    tokens: int
    memory_enabled: bool
    temporary: bool
    entries: tuple[ManifestEntry, ...]

    @property
    def persist(self) -> bool:
        """False for a temporary chat: nothing of this turn may be stored (not even this manifest)."""
        return not self.temporary

    def count(self, status: FragmentStatus) -> int:
        return sum(1 for entry in self.entries if entry.status is status)

    def to_dict(self) -> dict[str, Any]:
        return {
            "context_id": self.context_id,
            "created_at": self.created_at.isoformat(),
            "agent": self.agent,
            "fingerprint": self.fingerprint,
            "model": self.model,
            "encoding": self.encoding,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "memory_enabled": self.memory_enabled,
            "temporary": self.temporary,
            "entries": [{**entry.to_dict(), "reason": entry.reason} for entry in self.entries],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Manifest:
        try:
            return cls(
                context_id=str(data["context_id"]),
                created_at=datetime.fromisoformat(str(data["created_at"])),
                agent=str(data["agent"]),
                fingerprint=str(data["fingerprint"]),
                model=None if data.get("model") is None else str(data["model"]),
                encoding=str(data["encoding"]),
                budget_tokens=int(data["budget_tokens"]),
                tokens=int(data["tokens"]),
                memory_enabled=bool(data["memory_enabled"]),
                temporary=bool(data["temporary"]),
                entries=tuple(
                    ManifestEntry(
                        layer=str(e["layer"]),
                        source=str(e["source"]),
                        tokens=int(e["tokens"]),
                        status=FragmentStatus(e["status"]),
                        flags=tuple(str(f) for f in e.get("flags", ())),
                        reason=str(e.get("reason", "")),
                    )
                    for e in data["entries"]
                ),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a context manifest ({exc}); it must come from Manifest.to_dict()") from None
