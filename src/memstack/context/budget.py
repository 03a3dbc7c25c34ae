"""Token budget: cached counts and the trim policy of DESIGN §2.

Counts come from the target model family's real BPE (:class:`memstack.tokens.TokenCounter`). Each rendered unit
of text is counted once and cached by its exact text, so the thread and memories that recur from turn to turn cost
nothing to count again.

Trimming walks the stack bottom-up over the layers whose rule is not ``never`` (thread, turn log, summaries,
memory, facts by default), oldest first or lowest score first within a layer, skipping pinned fragments (the latest
exchange, top memory hits, hard exceptions) and stopping as soon as the total fits. If the pinned and never-trimmed
parts alone exceed the budget, :class:`~memstack.errors.BudgetExceeded` says by how much.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from memstack.context.stack import LayerStack, Trim
from memstack.errors import BudgetExceeded
from memstack.tokens import TokenCounter

__all__ = ["CachedCounter", "Slot", "fit_budget"]

_CACHE_LIMIT = 200_000
#: Characters of the texts one cache keeps (a text may be a 32,000-character message): 8-32 MB of keys.
_CHAR_LIMIT = 8_000_000


class _Counts:
    """Token counts by text, at most :data:`_CACHE_LIMIT` texts and :data:`_CHAR_LIMIT` characters of them; when
    either is reached the oldest tenth goes. Reads are plain dict lookups; writes take a lock (assemblies run in
    threads)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def put(self, text: str, n: int) -> None:
        with self._lock:
            counts = self.counts
            while counts and (len(counts) >= _CACHE_LIMIT or self._chars + len(text) > _CHAR_LIMIT):
                for old in list(counts)[: max(1, len(counts) // 10)]:
                    self._chars -= len(old)
                    del counts[old]
            if text not in counts:
                self._chars += len(text)
            counts[text] = n


_caches: dict[str, _Counts] = {}


class CachedCounter:
    """A :class:`TokenCounter` with a shared per-encoding cache of counts (bounded; oldest entries go first)."""

    def __init__(self, model: str | None) -> None:
        self._counter = TokenCounter(model)
        self.encoding = self._counter.encoding_name
        self._cache = _caches.setdefault(self.encoding, _Counts())
        self._lines = _caches.setdefault(self.encoding + "+newline", _Counts())

    def count(self, text: str) -> int:
        n = self._cache.counts.get(text)
        if n is None:
            n = self._counter.count(text)
            self._cache.put(text, n)
        return n

    def count_line(self, unit: str) -> int:
        """Tokens of ``unit`` followed by a newline, cached by ``unit``."""
        n = self._lines.counts.get(unit)
        if n is None:
            n = self._counter.count(unit + "\n")
            self._lines.put(unit, n)
        return n


@dataclass(slots=True)
class Slot:
    """One fragment as the budget sees it."""

    layer: str
    cost: int  # its tokens plus what it alone adds (a chat message's overhead and wrapper)
    pinned: bool
    kept: bool = True


def fit_budget(
    slots: list[Slot],
    *,
    budget: int,
    fixed: int,
    section_cost: Mapping[str, int],
    shared_cost: tuple[frozenset[str], int] = (frozenset(), 0),
    stack: LayerStack,
) -> int:
    """Mark slots ``kept=False`` until the total fits ``budget``; return the total.

    ``fixed``: tokens always present. ``section_cost``: what a layer costs while it has any kept slot (heading,
    block tags). ``shared_cost``: a cost paid while any of a group of layers has a kept slot (the data-block
    preamble)."""
    live: dict[str, int] = {}
    pinned_live: dict[str, int] = {}
    total = fixed
    floor = fixed
    for slot in slots:
        if slot.kept:
            live[slot.layer] = live.get(slot.layer, 0) + 1
            total += slot.cost
            if slot.pinned:
                pinned_live[slot.layer] = pinned_live.get(slot.layer, 0) + 1
                floor += slot.cost
    group, group_cost = shared_cost
    total += sum(section_cost.get(layer, 0) for layer in live)
    floor += sum(section_cost.get(layer, 0) for layer in pinned_live)
    group_live = sum(live.get(layer, 0) for layer in group)
    if group_live:
        total += group_cost
    if any(pinned_live.get(layer) for layer in group):
        floor += group_cost
    if total <= budget:
        return total
    if floor > budget:
        raise BudgetExceeded(floor, budget)

    by_layer: dict[str, list[Slot]] = {}
    for slot in slots:
        by_layer.setdefault(slot.layer, []).append(slot)
    for spec in stack.trim_order():
        members = by_layer.get(spec.key, [])
        order = reversed(members) if spec.trim is Trim.LOWEST_SCORE_FIRST else iter(members)
        for slot in order:
            if total <= budget:
                return total
            if not slot.kept or slot.pinned:
                continue
            slot.kept = False
            total -= slot.cost
            live[spec.key] -= 1
            if live[spec.key] == 0:
                total -= section_cost.get(spec.key, 0)
            if spec.key in group:
                group_live -= 1
                if group_live == 0:
                    total -= group_cost
    return total
