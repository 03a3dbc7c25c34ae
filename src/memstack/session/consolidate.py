"""Consolidation of base truth every ``consolidate_every`` turns (seed 04 §5.2): merge, drop superseded, keep rules.

Offline (:func:`merge_facts`): facts with the same normalised text merge; a newer ``key: value`` supersedes an older
one with the same key; near-duplicates — the same numbers and either content-word overlap ≥ ``merge_similarity`` or
embedding cosine ≥ ``merge_cosine`` — merge into the longer wording. A model (:class:`Summarizer.consolidate`) may
condense more freely; :func:`consolidate_base_truth` then guards what it returns.

Guarantees, whoever consolidates:
* every hard exception survives verbatim: one a model dropped or rewrote is restored (and reported);
* a model cannot invent: a fact whose numbers, names or content words are not in the old base truth is rejected,
  and so is any new wording of a rule (must / never / avoid …): rules are kept verbatim or not touched;
* a model cannot create hard exceptions: only text identical to an old hard exception is hard;
* a failed or empty consolidation leaves base truth as it was (offline merging still runs).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from memstack.errors import ProviderError
from memstack.session.base import Summarizer
from memstack.session.diff import is_hard_rule
from memstack.session.settings import SessionSettings
from memstack.session.support import Verdict, check_support
from memstack.session.text import count_words, fact_key, normalize, similarity
from memstack.text import numbers
from memstack.types import Exchange, Fact, Vector

__all__ = ["Consolidation", "MergeResult", "consolidate_base_truth", "consolidation_due", "merge_facts"]

log = logging.getLogger("memstack.session")


@dataclass(frozen=True, slots=True)
class MergeResult:
    facts: list[Fact]
    merged: list[tuple[Fact, Fact]]  # (dropped, kept in its place)


@dataclass(frozen=True, slots=True)
class Consolidation:
    facts: tuple[Fact, ...]
    dropped: tuple[Fact, ...]  # old facts whose text is gone (merged or superseded)
    restored: tuple[Fact, ...]  # hard exceptions the summarizer dropped, put back
    rejected: tuple[str, ...]  # facts the summarizer invented
    consolidated_by: str
    error: str = ""


def consolidation_due(turn: int, last_consolidated_turn: int, fact_count: int, settings: SessionSettings) -> bool:
    """Every ``consolidate_every`` turns, or sooner when base truth holds more than ``max_facts`` facts."""
    if fact_count < 2:
        return False
    return turn - last_consolidated_turn >= settings.consolidate_every or fact_count > settings.max_facts


def merge_facts(facts: Sequence[Fact], settings: SessionSettings, *, vectors: Vector | None = None) -> MergeResult:
    """Offline merge; ``vectors`` (unit rows, one per fact) adds paraphrase detection by cosine."""
    kept: list[tuple[int, Fact]] = []  # (index into facts, fact)
    merged: list[tuple[Fact, Fact]] = []
    for j, fact in enumerate(facts):
        placed = False
        for slot, (i, old) in enumerate(kept):
            verdict = _relation(old, fact, settings, None if vectors is None else float(vectors[i] @ vectors[j]))
            if verdict is None:
                continue
            if old.hard_exception and fact.hard_exception and normalize(old.text) != normalize(fact.text):
                continue  # two distinct rules: both survive
            winner = _winner(old, fact, verdict)
            loser = fact if winner is old else old
            since = min(old.since_turn, fact.since_turn) if verdict == "same" else winner.since_turn
            merged_fact = Fact(winner.text, old.hard_exception or fact.hard_exception, since)
            kept[slot] = (j if winner is fact else i, merged_fact)
            merged.append((loser, merged_fact))
            placed = True
            break
        if not placed:
            kept.append((j, fact))
    return MergeResult([f for _, f in kept], merged)


def _relation(old: Fact, new: Fact, s: SessionSettings, cosine: float | None) -> str | None:
    if normalize(old.text) == normalize(new.text):
        return "same"
    key = fact_key(new.text)
    if key is not None and key == fact_key(old.text):
        return "superseded"
    if set(numbers(old.text)) != set(numbers(new.text)):
        return None
    if similarity(old.text, new.text) >= s.merge_similarity or (cosine is not None and cosine >= s.merge_cosine):
        return "near"
    return None


def _winner(old: Fact, new: Fact, relation: str) -> Fact:
    if old.hard_exception != new.hard_exception:
        return old if old.hard_exception else new  # a rule's wording is never replaced by a plain fact's
    if relation == "superseded":
        return new if new.since_turn >= old.since_turn else old
    return new if count_words(new.text) >= count_words(old.text) else old


async def consolidate_base_truth(
    summarizer: Summarizer, base_truth: Sequence[Fact], settings: SessionSettings | None = None
) -> Consolidation:
    """Consolidate with ``summarizer`` under a timeout, then enforce the guarantees of this module."""
    s = settings or SessionSettings()
    old = tuple(base_truth)
    error = ""
    try:
        async with asyncio.timeout(s.timeout_s):
            proposed = list(await summarizer.consolidate(old))
    except (TimeoutError, ProviderError) as exc:
        error = f"consolidation by {summarizer.name} failed ({exc or 'timed out'}); merged offline instead"
        log.warning(error)
        proposed = merge_facts(old, s).facts
    if old and not proposed:
        error = f"{summarizer.name} returned no facts for {len(old)}; base truth kept"
        log.warning(error)
        proposed = list(old)
    source = Exchange(0, "\n".join(f.text for f in old), "")
    hard_texts = {normalize(f.text): f for f in old if f.hard_exception}
    old_by_text = {normalize(f.text): f for f in old}
    facts: list[Fact] = []
    rejected: list[str] = []
    seen: set[str] = set()
    for fact in proposed:
        norm = normalize(fact.text)
        if not norm or norm in seen:
            continue
        if norm not in old_by_text and (
            is_hard_rule(fact.text) or check_support(fact.text, source, s).verdict is not Verdict.SUPPORTED
        ):
            rejected.append(fact.text)
            log.warning("consolidation: rejected %r: new wording of a rule, or not in the old base truth", fact.text)
            continue
        seen.add(norm)
        previous = old_by_text.get(norm)
        since = previous.since_turn if previous else max((f.since_turn for f in old), default=0)
        facts.append(Fact(fact.text, norm in hard_texts, since))
    restored = tuple(f for n, f in hard_texts.items() if n not in seen)
    for fact in restored:
        log.warning("consolidation: hard exception %r was dropped by %s; restored", fact.text, summarizer.name)
    final = tuple([*[f for f in old if f in restored], *facts])
    kept_texts = {normalize(f.text) for f in final}
    dropped = tuple(f for f in old if normalize(f.text) not in kept_texts)
    return Consolidation(final, dropped, restored, tuple(rejected), summarizer.name, error)
