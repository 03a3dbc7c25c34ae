"""``memstack eval guard``: the content guard's two error rates, measured in one run.

* **Ordinary text** should pass: every turn of a LoCoMo file (people chatting), the sentences of an STS-B or PAWS
  file, or any text file with one text per line (assistant replies, say). Reported per set: how many texts were
  flagged, how many of those would be quarantined (a rule hit or a confident semantic hit) and how many only kept in
  their block, marked (``suspect``: a low-confidence semantic hit).
* **Attacks** should be caught: a JSON file ``{"attacks": [...], "benign": [...]}`` (the guard's corpus format,
  e.g. the frozen development set ``tests/guard/data/guard_dev.json``): attacks caught, look-alikes flagged.

Texts are scanned as memory-layer content, the layer that quarantines. What a held-out attack set scores is for a
release note, measured once; the test suite checks that this scorer counts right, never what it scores.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstack.errors import InputError
from memstack.evals.dedup import load_pairs
from memstack.evals.extraction import load_turns
from memstack.files import read_text
from memstack.guard import LOW_CONFIDENCE, ContentGuard

__all__ = ["Tally", "attack_set", "ordinary_sets", "tally"]

_BATCH = 256


@dataclass(frozen=True, slots=True)
class Tally:
    """What the guard did with one set of texts."""

    texts: int
    flagged: int
    quarantined: int  # flagged by a rule or a confident semantic hit
    kept_flagged: int  # only a low-confidence semantic hit: kept in its block, marked
    examples: tuple[str, ...]  # the first flagged texts, for a look

    @property
    def rate(self) -> float:
        return self.flagged / self.texts if self.texts else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "texts": self.texts,
            "flagged": self.flagged,
            "rate": round(self.rate, 5),
            "quarantined": self.quarantined,
            "kept_flagged": self.kept_flagged,
        }


def tally(guard: ContentGuard, texts: Sequence[str], *, examples: int = 0) -> Tally:
    """Scan every text (in batches, so a semantic guard embeds many at once) and count what it flagged."""
    flagged = quarantined = kept = 0
    shown: list[str] = []
    for start in range(0, len(texts), _BATCH):
        batch = texts[start : start + _BATCH]
        for text, flags in zip(batch, guard.scan_many([(t, False) for t in batch]), strict=True):
            if not flags:
                continue
            flagged += 1
            if flags == LOW_CONFIDENCE:
                kept += 1
            else:
                quarantined += 1
            if len(shown) < examples:
                shown.append(text)
    return Tally(len(texts), flagged, quarantined, kept, tuple(shown))


def ordinary_sets(
    *, locomo: Sequence[Path] = (), stsb: Sequence[Path] = (), paws: Sequence[Path] = (), texts: Sequence[Path] = ()
) -> dict[str, list[str]]:
    """Each named set of ordinary texts, deduplicated in order: ``locomo`` (every turn), ``stsb``/``paws`` (both
    sentences of each pair), ``texts`` (one text per line); keyed by the file's name."""
    out: dict[str, list[str]] = {}
    for path in locomo:
        out[f"locomo:{path.name}"] = _unique(t.text for t in load_turns(path))
    for fmt, paths in (("stsb", stsb), ("paws", paws)):
        for path in paths:
            out[f"{fmt}:{path.name}"] = _unique(s for pair in load_pairs(path, fmt) for s in (pair.s1, pair.s2))
    for path in texts:
        lines = read_text(path, "text file", hint="pass it with --texts").splitlines()
        out[f"texts:{path.name}"] = _unique(lines)
    if not out:
        raise InputError("give at least one set of ordinary text: --locomo, --stsb, --paws or --texts")
    return out


def attack_set(path: Path) -> tuple[list[str], list[str]]:
    """The attacks and look-alikes of a guard corpus file ``{"attacks": [...], "benign": [...]}``."""
    try:
        data = json.loads(read_text(path, "attack file", hint="pass it with --attacks"))
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path} is not JSON ({exc}); an attack file is {{'attacks': [...], 'benign': [...]}}"
        ) from None
    attacks, benign = (data.get(k) if isinstance(data, dict) else None for k in ("attacks", "benign"))
    if not isinstance(attacks, list) or not all(isinstance(t, str) for t in attacks):
        raise InputError(f"{path} needs 'attacks': a list of texts (and optionally 'benign')")
    benign = benign if isinstance(benign, list) else []
    return attacks, [t for t in benign if isinstance(t, str)]


def _unique(texts: Any) -> list[str]:
    return [t for t in dict.fromkeys(str(t).strip() for t in texts) if t]
