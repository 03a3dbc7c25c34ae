"""The offline classifier (``offline:rules-v1``): rules first, embeddings only for what the rules let through.

1. :func:`~memstack.capture.rules.screen` (regular expressions, microseconds) drops questions, task requests,
   greetings, remarks about the assistant and passing states, and returns first-person sentences with a category
   guess and a strength. A message with no first-person word and no "remember" stops at one regex search.
2. The surviving sentences are embedded in one batch and compared with written exemplars of each category and of
   non-memories (:mod:`~memstack.capture.exemplars`); the similarity margin adjusts the rule strength into a
   confidence, and picks the category when no rule cue did.
3. The clauses the rules refused (no first-person word: "lactose intolerant.", "short answers pls"; an imperative
   they cannot parse: "default to TypeScript"; the second fact of a compound message) are read by the capture head
   (:mod:`~memstack.capture.head`, a softmax over the same embeddings, in the same batch), when the embedder is the
   one it was trained on. A bare predicate that a category cue of the rules names, read with its "I'm" ("vegetarian
   since 2019"), needs only even odds from the head (:data:`CUED_ODDS`). One it keeps is a standing instruction
   (written in the frame of :func:`~memstack.capture.instructions.framed`) or a statement: with its subject when it
   has one or chat left it out, with "User is" before a bare predicate ("User is lactose intolerant."), and otherwise
   the user's own words, attributed ("User said: …"), never a guessed verb. A first-person clause the rules kept too
   weakly to store (no cue word they know: "I genuinely cannot stand cilantro", "I bank with Monzo", "when you write
   code for me default to TypeScript") is read by the head too, from the vector already computed, and kept when the
   head keeps it: the rules' cue lists cannot name every way of saying a fact, and the head's threshold already
   holds the negatives.
4. Dates are read against the message time: the content keeps the user's time words, with the day they were said
   beside any that count from it (:func:`memstack.dates.anchor`); a sentence about a future date becomes a
   ``schedule`` memory that expires the day after it; the content is rewritten about "User".

No language model is involved: this is an honest baseline, measured by ``memstack eval extraction``.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from datetime import datetime

import numpy as np

from memstack.capture.base import MIN_CONFIDENCE, ClassifyContext
from memstack.capture.clauses import head_reading, restore_be, restore_subject
from memstack.capture.exemplars import NEGATIVE, POSITIVE
from memstack.capture.head import INSTRUCTION, CaptureHead, HeadVerdict, load_capture_head
from memstack.capture.instructions import framed, standing_instruction
from memstack.capture.rewrite import third_person
from memstack.capture.rules import Clause, asks_for_work, cued_predicate, screen, starts_with_self
from memstack.dates import anchor, expiry_for, keep_said, stated_start
from memstack.embed import Embedder, get_embedder
from memstack.types import MAX_CONTENT_CHARS, Candidate, Category, Vector

__all__ = ["OfflineClassifier"]

#: Weight of the exemplar margin (best positive minus best negative cosine) added to the rule strength.
MARGIN_WEIGHT = 1.0
#: The head's probability that keeps a bare predicate a category cue of the rules names ("vegetarian since 2019":
#: the rules read "I'm vegetarian since 2019" as a fact): two readings agreeing, one of them more sure than not, where
#: the head alone needs its threshold. A reaction ("hilarious", "so jealous") has no cue, and the head puts it near 0.
CUED_ODDS = 0.5
#: At most this many candidates per message.
MAX_CANDIDATES = 5
# A statement without the user as its subject that speaks to the other side, or whose subject points at something
# said before: it cannot stand alone as a fact about the user (on LoCoMo's turns, most of what the head kept was such
# remarks: "sounds like your event was amazing", "it was really rewarding").
_ELSEWHERE = re.compile(
    r"\b(?:you|your|yours|you're|y'all|ya|u)\b|^(?:it|it's|its|they|they're|that|that's|this|these|those|there|"
    r"he|she|him|her|them|sounds|glad|congrats|have a)\b",
    re.IGNORECASE,
)


#: The exemplars' vectors by embedding model (name, dimension): constant texts, so one embedding per process serves
#: every classifier (an engine opened again, each test's engine), where each used to embed them all again.
_EXEMPLARS: dict[tuple[str, int], tuple[Vector, list[Category], Vector]] = {}


class OfflineClassifier:
    """Rules + embeddings; pass the engine's embedder so the model is loaded once."""

    name = "offline:rules-v1"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        min_confidence: float = MIN_CONFIDENCE,
        head: CaptureHead | None = None,
    ) -> None:
        self._embedder = embedder
        self._head = head
        self._owns_embedder = embedder is None
        self.min_confidence = min_confidence
        self._exemplars: tuple[Vector, list[Category], Vector] | None = None
        self._lock = asyncio.Lock()

    async def _get_embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder("local:minilm")
        return self._embedder

    async def _exemplar_vectors(self) -> tuple[Vector, list[Category], Vector]:
        async with self._lock:
            if self._exemplars is None:
                embedder = await self._get_embedder()
                key = (embedder.name, embedder.dim)
                if key not in _EXEMPLARS:
                    texts = [t for examples in POSITIVE.values() for t in examples]
                    labels = [c for c, examples in POSITIVE.items() for _ in examples]
                    vectors = await embedder.embed([*texts, *NEGATIVE])
                    _EXEMPLARS[key] = (vectors[: len(texts)], labels, vectors[len(texts) :])
                self._exemplars = _EXEMPLARS[key]
            return self._exemplars

    def _head_for(self, embedder: Embedder) -> CaptureHead | None:
        """The capture head, when ``embedder`` is the model it reads (another embedder's vectors mean nothing to it)."""
        head = self._head or load_capture_head()
        return head if embedder.name == head.model else None

    async def classify(self, message: str, *, at: datetime, context: ClassifyContext | None = None) -> list[Candidate]:
        embedder = await self._get_embedder()
        head = self._head_for(embedder)
        refused: list[str] | None = [] if head is not None else None
        clauses = screen(message, context.recent if context else (), limit=MAX_CANDIDATES * 2, refused=refused)
        refused = refused or []
        if not clauses and not refused:
            return []
        out: list[Candidate] = []
        for clause in clauses:
            if clause.content is not None:  # a standing instruction: the rule wrote it, no comparison needed
                out.append(self._written(clause, at))
        rest = [c for c in clauses if c.content is None]
        if not rest and not refused:
            return out[:MAX_CANDIDATES]
        vectors = await embedder.embed([*(c.text for c in rest), *(head_reading(t) for t in refused)])
        if rest:
            positives, labels, negatives = await self._exemplar_vectors()
            pos_sim = vectors[: len(rest)] @ positives.T
            neg_best = (vectors[: len(rest)] @ negatives.T).max(axis=1)
        second: list[HeadVerdict | None] = [None] * len(rest)
        if head is not None and rest:
            second = [v if head.keeps(v) else None for v in head.verdicts(vectors[: len(rest)])]
        for i, clause in enumerate(rest):
            best = int(np.argmax(pos_sim[i]))
            margin = float(pos_sim[i, best] - neg_best[i])
            confidence = 1.0 if clause.explicit else min(1.0, max(0.0, clause.strength + MARGIN_WEIGHT * margin))
            if confidence < self.min_confidence:
                verdict = second[i]  # the head's reading, where it keeps the clause
                if verdict is not None and (rescued := self._second_reading(clause, verdict, at)) is not None:
                    out.append(rescued)
                continue
            candidate = self._candidate(clause, labels[best], confidence, at)
            if candidate is not None:
                out.append(candidate)
        if head is not None and refused:
            for text, verdict in zip(refused, head.verdicts(vectors[len(rest) :]), strict=True):
                if not head.keeps(verdict):
                    if verdict.probability < CUED_ODDS or cued_predicate(text) is None:
                        continue
                    # kept as surely as one the head keeps alone (the capture pipeline stores from 0.7)
                    verdict = HeadVerdict(verdict.label, head.threshold)
                if (candidate := self._learned(text, verdict, at)) is not None:
                    out.append(candidate)
        out.sort(key=lambda c: -c.confidence)
        return out[:MAX_CANDIDATES]

    def _second_reading(self, clause: Clause, verdict: HeadVerdict, at: datetime) -> Candidate | None:
        """A clause the rules kept about the user but too weakly (no category cue they know: "I genuinely cannot
        stand cilantro", "I bank with Monzo", "when you write code for me default to TypeScript"), which the head
        reads as a memory: a standing instruction in its frame, or the statement as the rules read it, at the head's
        probability. Not one that speaks to the other side ("if you're ever helping me …"), the reason the rules
        marked it down, nor a request for a piece of work."""
        if verdict.label == INSTRUCTION:
            return self._learned(clause.text, verdict, at)
        if clause.reply_to is not None or asks_for_work(clause.text) or _ELSEWHERE.search(clause.text):
            return None
        category = clause.category or verdict.category
        return self._candidate(replace(clause, strength=verdict.probability), category, verdict.probability, at)

    def _learned(self, text: str, verdict: HeadVerdict, at: datetime) -> Candidate | None:
        """A refused clause the head keeps, written as faithfully as its form allows (see the module docstring)."""
        if verdict.label == INSTRUCTION:
            if asks_for_work(text) and standing_instruction(text, lasting_only=True) is None:
                # a request for a piece of work ("give me a checklist of …", "translate the email into Japanese,
                # formal register") is not a standing instruction unless a word makes it last, as the rules read it
                return None
            content = framed(text)
            if content is None:
                return None
            clause = Clause(text, False, verdict.category, verdict.probability, content=content)
            return self._written(clause, at)
        if asks_for_work(text):
            return None  # a request for a piece of work is an instruction or nothing, never a statement
        if _ELSEWHERE.search(text):
            return None  # about the other side ("your event"), or its subject is something said before ("it was …")
        restored = restore_subject(text)
        category = verdict.category
        if starts_with_self(restored):
            clause = Clause(restored, False, category, verdict.probability)
        elif category in (Category.FACT, Category.PREFERENCE) and (be := restore_be(restored)) is not None:
            clause = Clause(be, False, category, verdict.probability)
        else:
            clause = Clause(restored, False, category, verdict.probability, said=True)
        return self._candidate(clause, category, verdict.probability, at)

    def _candidate(self, clause: Clause, nearest: Category, confidence: float, at: datetime) -> Candidate | None:
        said_on: str | None = None
        if clause.said:  # the user's words kept: the day goes into the attribution below
            text, mentions, said_on = keep_said(clause.text, at)
        else:
            text, mentions = anchor(clause.text, at)
        expires = expiry_for(mentions, at)
        category = clause.category or nearest
        if expires is not None and category in (Category.GENERAL, Category.FACT, Category.SCHEDULE):
            category = Category.SCHEDULE  # a dated event ahead: kept with its date, expires after it
        elif category is Category.SCHEDULE and expires is None:
            category = Category.GENERAL  # a past or undated event is a plain statement
        content = third_person(text, their=True).rstrip(" ,;:-")
        if clause.said:  # no subject to rewrite: what the user said, attributed, dated when its times need the day
            lead = f"User said on {said_on}: " if said_on else "User said: "
            content = f"{lead}{text[:1]}{content[1:]}" if text[:1].isalpha() else f"{lead}{content}"
        if clause.reply_to is not None:
            content = f"Asked {clause.reply_to!r}, User said: {content}"
        if len(content.split()) < 3:
            return None
        if len(content) > MAX_CONTENT_CHARS:
            content = content[: MAX_CONTENT_CHARS - 1].rstrip() + "…"
        return Candidate(
            content=content,
            category=category,
            confidence=round(confidence, 3),
            explicit=clause.explicit,
            observed_at=at,
            expires_at=expires if category is Category.SCHEDULE else None,
            evidence=clause.text,
            valid_from=stated_start(mentions, at),
        )

    @staticmethod
    def _written(clause: Clause, at: datetime) -> Candidate:
        content = clause.content or clause.text
        return Candidate(
            content=content[: MAX_CONTENT_CHARS - 1] + "…" if len(content) > MAX_CONTENT_CHARS else content,
            category=clause.category or Category.PREFERENCE,
            confidence=round(clause.strength, 3),
            explicit=clause.explicit,
            observed_at=at,
            evidence=clause.text,
        )

    async def aclose(self) -> None:
        if self._owns_embedder and self._embedder is not None:
            await self._embedder.aclose()
        self._embedder = None
        self._exemplars = None
