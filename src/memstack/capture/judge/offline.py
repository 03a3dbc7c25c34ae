"""The offline update judge (``offline``): a fine-tuned cross-encoder, no phrase tables.

For each candidate, the memories nearest to it (at most :data:`TOP`, cosine ≥ :data:`MIN_COSINE`: a memory about
something else is not read) are read together with the candidate by the cross-encoder of
:mod:`~memstack.capture.judge.cross` (``[CLS] memory [SEP] candidate [SEP]``), which answers how likely the
candidate makes the memory no longer true. The most likely memory is superseded when that score reaches the
threshold of the model's card, unless the candidate is news about someone else ("User's sister moved to Berlin",
"Robert's father passed away") and the memory is about the user: that never ends what the user's memory says.
Otherwise the candidate is an addition (the dedup rule still decides duplicate / new).

With the MiniLM embedder (the default), the cross-encoder's best score is read together with the news head of
:mod:`~memstack.capture.judge.newshead` (does the candidate, on its own, read as news of a change?), and the
combined probability decides, at the head's own threshold; with another embedder the cross-encoder decides alone.

The model is trained by ``scripts/train_update_crossencoder.py`` on the written (memory, message) pairs of
``tests/capture/data/judge/`` and generated direct cases, each message read through the capture pipeline as the judge
will see it; the development set of ``memstack eval updates`` is never trained on: the threshold is chosen on it (at
most 2% of its compatible cases superseded), and the card records the figures. What it reaches on wordings it has
never seen is measured on blind sets (README); a model judge (``$MEMSTACK_UPDATE_MODEL``) reads news far better.

Cost: one ONNX run over the candidates' pairs of a batch (about a millisecond per pair on one core), in a thread;
with the news head, one embedding call for the batch's candidates and a small matrix product.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from memstack.capture.judge.base import JudgeItem, UpdateKind, UpdateVerdict
from memstack.capture.judge.cross import Card, CrossEncoder, load_card, shared_cross_encoder
from memstack.capture.judge.newshead import NewsHead, load_news_head
from memstack.dates import unanchored
from memstack.embed import Embedder
from memstack.text import RELATION_WORDS
from memstack.types import ScoredMemory

__all__ = ["MIN_COSINE", "TOP", "LearnedJudge", "about_someone_else", "as_sentence"]

#: Memories less similar than this to the candidate are not read.
MIN_COSINE = 0.2
#: At most this many memories per candidate are read (the nearest first).
TOP = 4

_PEOPLE = RELATION_WORDS - {"dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets"}
_POSSESSOR = re.compile(r"^(?:User['’]s\s+(?P<rel>\w+)|(?P<name>[A-Z][\w-]+)['’]s\s+\w+)")
_SAID = re.compile(r"^(?:Asked .*?, )?User said:\s*[\"“]?")


def about_someone_else(text: str) -> bool:
    """The statement's subject is someone else: "User's sister …", "Robert's father …" (a possessive before the
    subject, other than the user's own things), also in the user's words kept as said ("User said: Robert's …")."""
    m = _POSSESSOR.match(_SAID.sub("", unanchored(text).strip()))
    if m is None:
        return False
    return m.group("name") is not None or (m.group("rel") or "").lower() in _PEOPLE


def as_sentence(memory: str) -> str:
    """A memory as the model was trained to read one: a sentence with its full stop. Every memory of its training
    pairs ended with one, and one added without ("User lives in Paris", through the API) scored 0.49 where the
    same memory with its stop scored 0.99 against the same news of a move."""
    text = memory.strip()
    return text if not text or text[-1] in ".!?…\"'”’)" else f"{text}."


def _read(item: JudgeItem) -> list[ScoredMemory]:
    return [hit for hit in item.nearest if hit.score >= MIN_COSINE][:TOP]


class LearnedJudge:
    """The learned offline judge. ``embedder``: the engine's; when it is the model the news head was trained on
    (``local:minilm``) the head reads the candidates' embeddings beside the cross-encoder, otherwise (or ``None``)
    the cross-encoder decides alone. ``model``: default the process's shared instance of the shipped cross-encoder
    (closed with the judge only when given); ``card``: default its card; ``head``: default the shipped news head."""

    name = "offline"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        model: CrossEncoder | None = None,
        card: Card | None = None,
        head: NewsHead | None = None,
    ) -> None:
        self._embedder = embedder
        self._own = model is not None
        self._model = model or shared_cross_encoder()
        self._card = card
        self._head = head

    def warm(self) -> None:
        """Read the model, its card and the news head now (blocking), so that the first judged turn does not."""
        self._model.load()
        _ = self.card
        _ = self.head

    @property
    def card(self) -> Card:
        if self._card is None:
            self._card = load_card()
        return self._card

    @property
    def head(self) -> NewsHead | None:
        """The news head, when the judge's embedder gives the vectors it reads."""
        if self._embedder is None:
            return None
        head = self._head or load_news_head()
        return head if self._embedder.name == head.model else None

    async def _chances(self, items: Sequence[JudgeItem], best: list[float]) -> list[float]:
        """Per item, how likely its best pair is news that ends the memory: the cross-encoder's score ``best`` read
        with the news head's reading of the candidate when there is a head, else the score itself."""
        head = self.head
        if head is None or self._embedder is None or not items:
            return best
        texts = [unanchored(item.candidate.content) for item in items]
        vectors = np.asarray(await self._embedder.embed(texts), dtype=np.float32)
        chances = head.probability(np.asarray(best, dtype=np.float32), head.news(vectors))
        return [float(c) for c in chances]

    async def judge(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        read = [_read(item) for item in items]
        pairs = [
            (as_sentence(unanchored(hit.memory.content)), unanchored(item.candidate.content))
            for item, hits in zip(items, read, strict=True)
            for hit in hits
        ]
        scores = await self._model.score(pairs)
        bests: list[tuple[int, float]] = []  # per item with hits: its best hit and that hit's score
        at = 0
        for hits in read:
            mine = [float(s) for s in scores[at : at + len(hits)]]
            at += len(hits)
            best = max(range(len(hits)), key=mine.__getitem__) if hits else -1
            bests.append((best, mine[best] if hits else 0.0))
        asked = [i for i, hits in enumerate(read) if hits]
        head = self.head
        chances = await self._chances([items[i] for i in asked], [bests[i][1] for i in asked])
        chance = dict(zip(asked, chances, strict=True))
        threshold = head.threshold if head is not None else self.card.threshold
        out: list[UpdateVerdict] = []
        for i, (item, hits) in enumerate(zip(items, read, strict=True)):
            if not hits:
                out.append(UpdateVerdict.add("no memory near enough to be about the same thing", self.name))
                continue
            best, score = bests[i]
            with_head = f"; with the news head {chance[i]:.3f}" if head is not None else ""
            if chance[i] < threshold:
                why = f"the cross-encoder does not read it as news about a memory (best {score:.3f}{with_head})"
                out.append(UpdateVerdict.add(why, self.name))
                continue
            hit = hits[best]
            if about_someone_else(item.candidate.content) and not about_someone_else(hit.memory.content):
                why = "news about someone else leaves what the user's memory says about the user"
                out.append(UpdateVerdict.add(why, self.name))
                continue
            why = f"the cross-encoder reads it as news that ends the memory ({score:.3f}{with_head}"
            why += f", cosine {hit.score:.2f})"
            out.append(UpdateVerdict(UpdateKind.SUPERSEDE, hit.memory.id, why, self.name))
        return out

    async def aclose(self) -> None:
        if self._own:
            self._model.close()
