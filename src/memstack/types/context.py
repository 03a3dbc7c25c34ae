"""The context stack: layers, fragments, and the manifest of what the model saw for one response."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any

from memstack.errors import InputError

__all__ = [
    "Fragment",
    "FragmentStatus",
    "Layer",
    "Manifest",
    "ManifestEntry",
    "TurnTimings",
    "check_manifest",
    "withhold",
]

_VISIBLE = re.compile(r"\S")


def withhold(text: str) -> str:
    """Quarantined text as a manifest keeps it: every visible character a block (``█``), spaces and line breaks kept,
    so an inspector shows its shape and length but never the words the guard refused to let the model see."""
    return _VISIBLE.sub("█", text)


class Layer(IntEnum):
    """The context stack. Order is authority and trim priority (DESIGN §2)."""

    CORE = 1
    CHARACTERISTICS = 2
    SESSION = 3
    DELEGATED = 4
    FACTS = 5
    MEMORY = 6
    SUMMARIES = 7
    TURN_LOG = 8
    THREAD = 9
    CURRENT = 10

    @property
    def label(self) -> str:
        return self.name.lower()


class FragmentStatus(StrEnum):
    KEPT = "kept"
    TRIMMED = "trimmed"
    QUARANTINED = "quarantined"


@dataclass(frozen=True, slots=True)
class Fragment:
    """One piece of text in the assembled context, with where it came from.

    ``layer`` is a built-in :class:`Layer` or the key of a layer added to a context stack
    (``memstack.context.stack``); ``label`` is the key either way.
    """

    layer: Layer | str
    source: str  # e.g. "agent:tutor#core", "memory:mem_...", "turn:12"
    text: str
    tokens: int = 0
    pinned: bool = False  # never trimmed
    flags: tuple[str, ...] = ()
    status: FragmentStatus = FragmentStatus.KEPT
    reason: str = ""
    role: str | None = None  # chat role for layers 9-10
    score: float | None = None  # retrieval score for layer 6

    @property
    def label(self) -> str:
        return self.layer.label if isinstance(self.layer, Layer) else self.layer


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    layer: str
    source: str
    tokens: int
    status: FragmentStatus
    flags: tuple[str, ...] = ()
    reason: str = ""
    #: The fragment's text as the model saw it (before the rendering's section titles and delimiters); for a
    #: quarantined fragment, :func:`withhold`-en. Empty for the session layer (session metadata is never stored)
    #: and in manifests stored before the text was kept.
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The wire form of ``memstack context render --json``: layer, source, tokens, status, flags, text."""
        return {
            "layer": self.layer,
            "source": self.source,
            "tokens": self.tokens,
            "status": self.status.value,
            "flags": list(self.flags),
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class TurnTimings:
    """Where one chat turn's time went, in milliseconds of a monotonic clock (``time.perf_counter``).

    The stages are consecutive pieces of the turn's critical path, from the moment the turn starts (its erasure
    fence pinned) to the moment its reply is ready, so they add up to ``total_ms`` with ``other_ms`` (what no stage
    names: handing work to the background, building the result):

    ``session_ms``: the detection's start, then the session's lock (waiting for the previous turn's phase 2) and
    state; ``queue_ms``: waiting for an admission slot (:mod:`memstack.turn.admission`); ``embed_ms``: the one
    embedding of the message; ``recall_ms``: layer 6 once the message is embedded, and the wait for layer 7 read
    beside it; ``guard_ms``: the content guard inside the assembly; ``assemble_ms``: the rest of the assembly;
    ``model_ms``: phase 1 (the chat model, its tool calls; with a stream, also the caller reading it); ``write_ms``:
    recording the exchange after the model (and the manifest's write, when it is still running then);
    ``detection_ms``: how much longer the reply then waited for memory detection (the badge race) than for the
    write: detection runs beside everything from the start, and costs the reply only what it adds at the end.

    Kept on the manifest a turn returns (``ChatResult.manifest``), never stored: the stored manifest is written
    while the model answers, before most of these are known."""

    total_ms: float
    session_ms: float = 0.0
    queue_ms: float = 0.0
    embed_ms: float = 0.0
    recall_ms: float = 0.0
    guard_ms: float = 0.0
    assemble_ms: float = 0.0
    model_ms: float = 0.0
    write_ms: float = 0.0
    detection_ms: float = 0.0

    @property
    def other_ms(self) -> float:
        return max(0.0, self.total_ms - sum(self.stages().values()))

    def stages(self) -> dict[str, float]:
        """Each stage's milliseconds by its name (``embed``, ``guard``…), in the turn's order; not ``other``."""
        return {f.name.removesuffix("_ms"): getattr(self, f.name) for f in fields(self) if f.name != "total_ms"}

    def to_dict(self) -> dict[str, float]:
        return {
            "total_ms": self.total_ms,
            **{f"{k}_ms": v for k, v in self.stages().items()},
            "other_ms": self.other_ms,
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
    timings: TurnTimings | None = field(default=None, compare=False)  # the turn's, in this process; not stored

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
                        text=str(e.get("text", "")),
                    )
                    for e in data["entries"]
                ),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"not a context manifest ({exc}); it must come from Manifest.to_dict()") from None


def check_manifest(manifest: Manifest, session_id: str | None = None) -> str:
    """The JSON a store keeps for ``manifest``. A temporary chat's manifest may not be stored (``InputError``)."""
    if manifest.temporary:
        raise InputError(f"context {manifest.context_id} belongs to a temporary chat; nothing of it may be stored")
    if not manifest.context_id or len(manifest.context_id) > 200:
        raise InputError(f"context id must be 1-200 characters, got {manifest.context_id!r}")
    if session_id is not None and (not session_id or len(session_id) > 200):
        raise InputError(f"session_id must be 1-200 characters or None, got {session_id!r}")
    return json.dumps(manifest.to_dict(), ensure_ascii=False, separators=(",", ":"))
