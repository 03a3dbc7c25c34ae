"""Memory updates: is a new fact news that replaces one of the user's memories, or an addition beside them?

The rules of the offline update judge (``offline:rules``), one decision per candidate against the memories the
writer's single nearest-neighbour call returned (:data:`UPDATE_NEIGHBOURS` of them, best first; the contract is
:mod:`memstack.capture.judge.base`). The candidate and each memory are read as frames
(:mod:`~memstack.capture.frames`: who, which attribute, what value, holds / began / ended), and the candidate
supersedes a memory when, **about the same subject**:

1. a single-valued attribute gets a new value (residence, job, partner, diet, school, commute, age, pay, a
   favourite, a count, the date of one event): "moved to Berlin" replaces "lives in Paris";
2. something the memory states ends, or something it says ended resumes, with the same key words ("no longer
   plays tennis", "sold my Civic", "started smoking again"; a plain "not" or a finished task only with all of
   them); a preference flips ("can't stand coffee anymore");
3. the candidate switches from it ("switched to an Android phone" and the memory is close in meaning);
4. the same statement with another number or date ("now earns 58000 a year");
5. a goal or plan is reached ("ran my first marathon" and the memory "wants to run a marathon").

Anything said about someone else ("my sister moved to Berlin"), anything marked as an addition ("also", "too",
"as well") and anything the frames do not cover ("we visited Rome") is an addition: the memory stays. The
embedding cosine only gates the looser rules (2–4: :data:`MIN_COSINE`), so similar words alone never supersede.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from memstack.capture import slots as sl
from memstack.capture.frames import (
    FACETS,
    POSITIVE_STATUS,
    STATUS,
    Frame,
    Mode,
    clauses,
    content,
    frames,
    head_stems,
    keys,
    normalise,
)
from memstack.capture.judge.base import UPDATE_NEIGHBOURS, JudgeItem, UpdateKind, UpdateVerdict
from memstack.types import ScoredMemory

__all__ = ["MIN_COSINE", "UPDATE_NEIGHBOURS", "OfflineUpdates", "supersedes"]

#: The looser rules (something ended, resumed, switched, renumbered) need at least this cosine between the two
#: texts; a single-valued attribute with a new value does not (its frames say enough).
MIN_COSINE = 0.3
#: Texts longer than this in all (candidate and memories) are compared in a thread, not on the event loop.
OFF_LOOP_CHARS = 1500
#: Jaccard similarity of two statements' content words for rule 4 (same statement, another number or date).
SAME_STATEMENT = 0.5


def _words(stems: frozenset[str]) -> str:
    return " ".join(sorted(stems)) or "-"


def _slot_name(slot: str) -> str:
    return slot.replace(":", " ")


def _same_slot(a: str, b: str) -> bool:
    if a == b or any(a in facets and b in facets for facets in FACETS):
        return True
    if a.startswith("schedule:") and b.startswith("schedule:"):
        ka, kb = set(a[9:].split()), set(b[9:].split())
        return len(ka & kb) / len(ka | kb) >= 0.5 if ka | kb else False
    return False


def _loose(slot: str) -> bool:
    return slot in ("activity", "likes", "switch")


def _overlap(new: frozenset[str], old: frozenset[str]) -> bool:
    """The key words of ``new`` mostly appear in ``old`` (at least one, and at least half of them): "quit smoking"
    in "smokes cigarettes", "started drinking again" in "does not drink alcohol"."""
    kn = keys(new)
    shared = kn & old
    return bool(shared) and 2 * len(shared) >= len(kn)


#: A negation that says only "not" ("is not allergic to dogs"), no ending ("anymore", "no longer", "gave up").
_PLAIN_NOT = re.compile(r"\b(?:not|never)\b")
_ENDED = re.compile(r"\b(?:anymore|any more|any longer|no longer|after all|now|since)\b")
#: A task completed ("finished the presentation for the producers"): news of its own, ending only what it names.
_COMPLETED = re.compile(r"\b(?:finished|completed|wrapped up|submitted|defended|handed in)\b")


def _ends(c: Frame, old: frozenset[str]) -> bool:
    """The negative frame ``c`` ends what ``old`` says: its key words mostly in it (:func:`_overlap`), or, for a
    plain "not" with no ending word or a completed task, all of them ("not allergic to dogs" says nothing of
    "allergic to cats", "finished the presentation" nothing of "hopes producers will see it")."""
    plain = _PLAIN_NOT.search(c.clause) and not _ENDED.search(c.clause)
    if plain or _COMPLETED.search(c.clause):
        return bool(keys(c.value)) and keys(c.value) <= old
    return _overlap(c.value, old)


def _single(c: Frame, m: Frame) -> str | None:
    """Rule 1: one single-valued attribute, a new value (or its end, or its start after an end)."""
    slot = _slot_name(m.slot)
    if m.negative and not c.negative:
        if m.slot in ("partner", "job", "school", "residence") or _overlap(c.value, m.value):
            return f"{slot}: no longer {_words(m.value)}, now {_words(c.value)}"
        return None
    if c.negative and not m.negative:
        named = c.value - STATUS  # "broke up with Sam": Sam; "is single": no one in particular
        # "retired from teaching" ends "teaches at Lincoln Elementary": the ended words against the whole clause
        if not named or _overlap(named, m.value | content(m)) or (m.slot == "partner" and not m.value):
            return f"{slot} ended ({_words(c.value or m.value)})"
        return None
    if c.negative or m.negative:
        return None
    if m.slot.startswith("schedule:"):
        if c.value and m.value and not (c.value <= m.value or m.value <= c.value):
            return f"{slot}: {_words(m.value)} → {_words(c.value)}"
        return None
    if c.mode is Mode.START:
        if not c.value:
            return f"{slot} changed" if m.slot in ("residence", "household", "job", "school") else None
        if not c.value <= m.value:
            return f"new {slot}: {_words(c.value)} (was {_words(m.value)})"
        return None
    # two statements of a state: only the same facet, both naming someone or something ("is married" names no one)
    cv, mv = c.value - POSITIVE_STATUS, m.value - POSITIVE_STATUS
    if c.slot == m.slot and cv and mv and not cv & mv:
        return f"new {slot}: {_words(c.value)} (was {_words(m.value)})"
    return None


def _loose_rule(c: Frame, m: Frame, cosine: float) -> str | None:
    """Rules 2 and 3: something ends, resumes, flips or is switched (gated by the cosine)."""
    if cosine < MIN_COSINE:
        return None
    if c.slot == "switch" and not m.negative:
        if c.origin and _overlap(c.origin, m.value):
            return f"switched from {_words(c.origin)} to {_words(c.value)}"
        if not c.origin and cosine >= SWITCH_COSINE:
            return f"switched to {_words(c.value)} (cosine {cosine:.2f})"
        return None
    if c.negative and not m.negative and _ends(c, m.value | content(m)):
        what = "opposite polarity" if c.slot == "likes" else "ended"
        return f"{what}: {_words(c.value)}"
    flipped = c.slot == m.slot == "likes" and bool(m.origin) and not c.negative
    if flipped and _overlap(c.value, m.origin) and not _overlap(c.value, m.value):
        return f"preference flipped: {_words(c.value)} over {_words(m.value)}"
    # an activity resumes only when said so ("again", "started"): "can't stop writing" after "finished the book"
    resumes = c.again or c.mode is Mode.START or (c.slot == m.slot != "activity")
    if m.negative and not c.negative and resumes and _overlap(c.value, m.value | content(m)):
        what = "opposite polarity" if c.slot == "likes" else "resumed"
        return f"{what}: {_words(c.value)}"
    return None


#: A switch with no "from" ("switched to an Android phone") must be this close to the memory it replaces.
SWITCH_COSINE = 0.5


def _numbers(clause: str) -> frozenset[str]:
    return frozenset(w for w in clause.replace(",", " ").split() if any(ch.isdigit() for ch in w))


def _renumbered(c: Frame, m: Frame, cosine: float) -> str | None:
    """Rule 4: the same statement with another number or date."""
    if cosine < MIN_COSINE or c.negative != m.negative:
        return None
    nc, nm = _numbers(c.clause), _numbers(m.clause)
    if not nc or not nm or nc <= nm or nm <= nc:
        return None
    wc, wm = keys(c.value), keys(m.value)
    if not wc | wm or len(wc & wm) / len(wc | wm) < SAME_STATEMENT:
        return None
    return f"same statement, {' '.join(sorted(nm))} → {' '.join(sorted(nc))}"


def _reached(new: str, m: Frame) -> str | None:
    """Rule 5: a goal or plan reached ("ran user's first half marathon" after "wants to run a half marathon"): the
    goal's verb in the past, said of the same subject, with the goal's object right after it."""
    goal = sl.GOAL.match(m.clause)
    if goal is None:
        return None
    want = keys(head_stems(goal.group("obj")))
    done = re.compile(rf"\b(?:{sl.past(goal.group('verb'))}|finished|completed)\b(?P<rest>.*)")
    for clause in clauses(normalise(new)):
        if clause.subject != m.subject or _PLAIN_NOT.search(clause.text):
            continue
        if (found := done.search(clause.text)) and want and want <= head_stems(found.group("rest")):
            return f"reached: {_words(want)}"
    return None


def _still_says(c: Frame, old_frames: Sequence[Frame]) -> bool:
    """A bare "… instead" replaces only a plan ("booked Lisbon for June instead" and "plans to visit Rome in June"),
    and not one it still names ("since user is lactose intolerant, user is trying coconut milk instead" leaves "is
    lactose intolerant, so needs the dairy-free recipe" and "is tempted to try dairy-free flavours")."""
    if c.slot != "switch" or not c.clause.endswith("instead"):
        return False
    plans = any(sl.GOAL.match(m.clause) or m.slot.startswith("schedule:") for m in old_frames)
    return not plans or any(keys(m.value) <= content(c) for m in old_frames)


def supersedes(new: str, old: str, cosine: float) -> str | None:
    """Why the statement ``new`` replaces the memory ``old`` (their embeddings' ``cosine`` given), or ``None``
    when it is an addition beside it."""
    old_frames = frames(old)
    if not old_frames:
        return None
    for m in old_frames:
        if (why := _reached(new, m)) is not None:
            return why
    for c in frames(new):
        if c.additive or _still_says(c, old_frames):
            continue
        for m in old_frames:
            if c.subject != m.subject:
                continue
            if c.single and m.single:
                if _same_slot(c.slot, m.slot) and (why := _single(c, m)) is not None:
                    return why
                continue
            if not (_loose(c.slot) or _loose(m.slot) or c.slot == m.slot or c.negative):
                continue
            why = _loose_rule(c, m, cosine) or _renumbered(c, m, cosine)
            if why is not None:
                return why
    return None


class OfflineUpdates:
    """The offline judge: :func:`supersedes` against each near memory; the closest superseded one wins."""

    name = "offline"

    async def judge(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        # ~0.5 ms for a short candidate against 8 short memories; long texts are read off the event loop
        size = sum(len(i.candidate.content) + sum(len(h.memory.content) for h in i.nearest) for i in items)
        if size > OFF_LOOP_CHARS:
            return await asyncio.to_thread(self._decide_all, items)
        return self._decide_all(items)

    def _decide_all(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        return [self.decide(item.candidate.content, item.nearest) for item in items]

    def decide(self, content: str, nearest: Sequence[ScoredMemory]) -> UpdateVerdict:
        for hit in nearest:  # best first
            why = supersedes(content, hit.memory.content, hit.score)
            if why is not None:
                return UpdateVerdict(UpdateKind.SUPERSEDE, hit.memory.id, f"{why} (cosine {hit.score:.2f})", self.name)
        return UpdateVerdict.add("no memory about the same subject and attribute", self.name)

    async def aclose(self) -> None:
        """Nothing to close."""
