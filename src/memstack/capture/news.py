"""News about what memstack already knows: sentences the classifier passed over that supersede one of the user's
memories.

The offline classifier keeps first-person self-disclosure, but news about a memory is often told otherwise: "Sadly
Bubbles didn't make it", "Robert passed away in February", "The Taylor Swift show got called off", "They made me
store manager". After classification, :class:`NewsFinder` takes each statement of the message that no candidate
came from, rewrites it about "User", embeds them in one batch and asks the update judge (whichever is configured,
one call for all of them) against the user's nearest memories. No word list picks the sentences first: news is told
in words no list foresees ("called it quits", "six weeks without a cigarette"), the offline judge was trained on every
such sentence, and a user without memories costs nothing more (nothing is embedded). Only a sentence the judge
says supersedes a memory becomes a candidate (in that memory's category, or ``schedule`` when it names a date ahead);
the writer then applies it like any other candidate, guard included (a model judge answers the writer's question
from its cache). Similar words alone never make news: the judge decides.

Used with the offline classifier only: an LLM classifier reads the whole message.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memstack.capture.judge import UPDATE_NEIGHBOURS, JudgeItem, UpdateJudge
from memstack.capture.rewrite import third_person
from memstack.capture.rules import statements
from memstack.dates import anchor, expiry_for, stated_start
from memstack.embed import Embedder
from memstack.store.base import Store
from memstack.types import MAX_CONTENT_CHARS, Candidate, Category, MemoryFilter, UserRef

__all__ = ["NEWS_CONFIDENCE", "NewsFinder"]

#: Confidence of a candidate found this way (the judge's rules matched; like a change cue of the classifier).
NEWS_CONFIDENCE = 0.85
#: At most this many sentences of one message are looked at.
MAX_SENTENCES = 8


class NewsFinder:
    """Finds the sentences of a message that supersede a memory; see the module docstring."""

    def __init__(self, store: Store, embedder: Embedder, judge: UpdateJudge) -> None:
        self.store = store
        self.embedder = embedder
        self.judge = judge

    async def find(
        self, user: UserRef, message: str, at: datetime, kept: Sequence[Candidate], agent_id: str | None = None
    ) -> list[Candidate]:
        """Candidates for the statements of ``message`` that supersede one of ``user``'s memories and that none of
        ``kept`` (the classifier's candidates) came from."""
        sentences = [s for s in statements(message) if not _covered(s, kept)]
        drafts = [d for d in (_draft(s, at) for s in sentences[:MAX_SENTENCES]) if d is not None]
        if not drafts or not await self.store.index.count_active(user):
            return []  # nothing to look at, or no memory it could be news about (and nothing is embedded)
        vectors = await self.embedder.embed([d.content for d in drafts])
        where = MemoryFilter(agent_id=agent_id)
        items: list[JudgeItem] = []
        for draft, vector in zip(drafts, vectors, strict=True):
            hits = await self.store.index.nearest(user, vector, UPDATE_NEIGHBOURS, where)
            if hits:  # none: none of the agent's
                items.append(JudgeItem(draft, tuple(hits)))
        verdicts = await self.judge.judge(items) if items else []
        out: list[Candidate] = []
        for item, verdict in zip(items, verdicts, strict=True):
            memory = next((h.memory for h in item.nearest if h.memory.id == verdict.memory_id), None)
            if not verdict.replaces or memory is None:
                continue
            draft = item.candidate
            category = draft.category
            if draft.expires_at is None:
                category = Category.GENERAL if memory.category is Category.SCHEDULE else memory.category
            out.append(
                Candidate(
                    content=draft.content,
                    category=category,
                    confidence=NEWS_CONFIDENCE,
                    observed_at=at,
                    expires_at=draft.expires_at,
                    evidence=draft.evidence,
                    valid_from=draft.valid_from,
                )
            )
        return out


def _covered(sentence: str, kept: Sequence[Candidate]) -> bool:
    return any(c.evidence and (c.evidence in sentence or sentence in c.evidence) for c in kept)


def _draft(sentence: str, at: datetime) -> Candidate | None:
    """The sentence as a candidate about "User", its times as said and dated (``schedule`` when it names a date
    ahead)."""
    text, mentions = anchor(sentence, at)
    content = third_person(text, their=True).rstrip(" ,;:-")
    if len(content.split()) < 3:
        return None
    if len(content) > MAX_CONTENT_CHARS:
        content = content[: MAX_CONTENT_CHARS - 1].rstrip() + "…"
    expires = expiry_for(mentions, at)
    category = Category.SCHEDULE if expires is not None else Category.GENERAL
    return Candidate(
        content,
        category,
        NEWS_CONFIDENCE,
        observed_at=at,
        expires_at=expires,
        evidence=sentence,
        valid_from=stated_start(mentions, at),
    )
