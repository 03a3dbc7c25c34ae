"""The offline update judge (``offline``): a fine-tuned cross-encoder, no phrase tables.

For each candidate, the memories nearest to it (at most :data:`TOP`, cosine ≥ :data:`MIN_COSINE`: a memory about
something else is not read) are read together with the candidate by the cross-encoder of
:mod:`~memstack.capture.judge.cross` (``[CLS] memory [SEP] candidate [SEP]``), which answers how likely the
candidate makes the memory no longer true; a candidate of several parts is also read part by part (:func:`views`),
and each memory keeps its best score. The most likely memory is superseded when that score reaches the
threshold of the model's card, unless the candidate is news about someone else ("User's sister moved to Berlin",
"Robert's father passed away") and the memory is about the user, or about another relative ("User's sister lives in
Ottawa."): that never ends what the memory says.
Otherwise the candidate is an addition (the dedup rule still decides duplicate / new).

With the MiniLM embedder (the default), the cross-encoder's best score is read together with the news head of
:mod:`~memstack.capture.judge.newshead` (does the candidate, on its own, read as news of a change?), and the
combined probability decides, at the head's own threshold; with another embedder the cross-encoder decides alone.

Below that threshold, the attribute head of :mod:`~memstack.capture.judge.attributes` may still supersede: when it
reads the statement and the memory as the same single-valued attribute of the user's life (a home city, an
employer, a car, a diet…), each at least its margin likely, the statement is not about someone else, and the
combined probability reaches the head's lower threshold. Sideways news of a new value ("finally got the keys to our
flat in Glasgow" against "User lives in Leeds.") scores under the main threshold, which is high because compatible
pairs on the same topic (a visit, a friend's news) score high too; the attribute is what tells them apart.

The model is trained by ``scripts/train_update_crossencoder.py`` on the written (memory, message) pairs of
``tests/capture/data/judge/`` and generated direct cases, each message read through the capture pipeline as the judge
will see it; the development set of ``memstack eval updates`` is never trained on: the threshold is chosen on it (at
most 2% of its compatible cases superseded), and the card records the figures. What it reaches on wordings it has
never seen is measured on blind sets (README); a model judge (``$MEMSTACK_UPDATE_MODEL``) reads news far better.

Cost: one ONNX run over the candidates' pairs of a batch (about a millisecond per pair on one core; a candidate of
several parts adds a pair per part and memory, at most :data:`MAX_PARTS`), in a thread;
with the heads, one embedding call for the batch's candidates and the memories they would end, and small matrix
products.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from memstack.capture.judge.attributes import AttributeHead, load_attribute_head
from memstack.capture.judge.base import JudgeItem, UpdateKind, UpdateVerdict
from memstack.capture.judge.cross import Card, CrossEncoder, load_card, shared_cross_encoder
from memstack.capture.judge.newshead import NewsHead, load_news_head
from memstack.dates import unanchored
from memstack.embed import Embedder
from memstack.text import RELATION_WORDS
from memstack.types import ScoredMemory

__all__ = ["MAX_PARTS", "MIN_COSINE", "TOP", "LearnedJudge", "Reading", "about_someone_else", "as_sentence", "views"]

#: Memories less similar than this to the candidate are not read.
MIN_COSINE = 0.2
#: At most this many memories per candidate are read (the nearest first).
TOP = 4

_PEOPLE = RELATION_WORDS - {"dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets"}
_POSSESSOR = re.compile(r"^(?:User['’]s\s+(?P<rel>\w+)|(?P<name>[A-Z][\w-]+)['’]s\s+\w+)(?P<rest>.*)", re.DOTALL)
_SAID = re.compile(r"^(?:Asked .*?, )?User said(?: on [^:]*)?:\s*[\"“]?")
#: Words before "'s" that are not owners: "It's been two weeks", "That's off", "Let's switch", "Here's the thing"
#: ("He's" and "She's" are: a third person is the subject).
_NOT_OWNERS = frozenset(
    """it that this there here what who where when why how let everything nothing something anything everyone
    everybody someone somebody nobody today tonight now""".split()  # noqa: SIM905
)
#: Verbs that report what someone said: "User's doctor said …" tells the user's news in the doctor's words.
_REPORTED = re.compile(
    r"^\s+(?:said|says|told|tells|thinks|thought|recommended|recommends|suggested|suggests|advised|advises|"
    r"confirmed|confirms|agreed|agrees|decided|decides)\b(?P<clause>.*)",
    re.DOTALL,
)


def about_someone_else(text: str, evidence: str = "") -> bool:
    """The statement's subject is someone else: "User's sister …", "Robert's father …" (a possessive before the
    subject, other than the user's own things), also in the user's words kept as said ("User said: Robert's …").

    Not someone else: a contraction ("It's been two weeks since …", "Let's switch …"); a word capitalised only
    because it begins the sentence, which the user's own words (``evidence``) write in lower case ("Dentist's office
    called, they moved User to Tuesday": the user's appointment); and someone's words about the user ("User's doctor
    said 80 kg is User's new target": the reported clause names the user)."""
    m = _POSSESSOR.match(_SAID.sub("", unanchored(text).strip()))
    if m is None:
        return False
    owner = (m.group("rel") or m.group("name") or "").lower()
    if m.group("name") is not None:
        if owner in ("he", "she"):
            return True
        if owner in _NOT_OWNERS:
            return False
        if owner not in _PEOPLE and re.search(rf"(?<![\w-]){re.escape(owner)}['’]s\b", evidence):
            return False  # a common noun in the user's words: "dentist's office"
    elif owner not in _PEOPLE:
        return False
    reported = _REPORTED.match(m.group("rest"))
    return not (reported is not None and re.search(r"\bUser\b", reported.group("clause")))


def _relation(text: str) -> str | None:
    """The relation word a statement about someone else opens with ("User's brother …": ``brother``), else
    ``None`` (the user's own news, or someone named: "Gina's …" may be the sister a memory names)."""
    m = _POSSESSOR.match(_SAID.sub("", unanchored(text).strip()))
    rel = (m.group("rel") or "").lower() if m is not None else ""
    return rel if rel in _PEOPLE else None


def _not_whose(news: str, evidence: str, memory: str) -> bool:
    """The news is about someone else and the memory not about that person: the memory is the user's own, or about
    another relative ("User's brother moved to Halifax." leaves "User's sister lives in Ottawa."; news of the same
    relative may end a memory about them, and a name against a relation word is not told apart)."""
    if not about_someone_else(news, evidence):
        return False
    if not about_someone_else(memory):
        return True
    mine, theirs = _relation(news), _relation(memory)
    return mine is not None and theirs is not None and mine != theirs


def as_sentence(memory: str) -> str:
    """A memory as the model was trained to read one: a sentence with its full stop. Every memory of its training
    pairs ended with one, and one added without ("User lives in Paris", through the API) scored 0.49 where the
    same memory with its stop scored 0.99 against the same news of a move."""
    text = memory.strip()
    return text if not text or text[-1] in ".!?…\"'”’)" else f"{text}."


#: Where a statement is cut into its parts for :func:`views`: a sentence's end, a comma or semicolon, a dash, and
#: "but", "so", "because" between clauses.
_PARTS = re.compile(r"(?:[,;]\s+|\s+[-–—]\s+|[.!?…]+\s+|\s+(?:but|so|because)\s+)")
_LEADING = re.compile(r"^(?:and|but|so|because|then|and then)\s+", re.IGNORECASE)
#: At most this many parts of one statement are read beside it.
MAX_PARTS = 3


def views(statement: str) -> list[str]:
    """``statement`` and its parts that say something of the user on their own ("User …" and three words or more),
    each as a sentence: the cross-encoder reads each, and the judge keeps its best score.

    The model was trained on statements of one or two clauses, and a clause of news inside a longer one reads
    unlike them: "Allergist did the oral challenge test and turns out User is not actually allergic to penicillin!"
    scored 0.06 against "User is allergic to penicillin." where "Turns out User is not actually allergic to
    penicillin!" scored 0.97. Read part by part, over recorded readings of the development set and the spent
    blind sets 9 and 10 (the judge's own decisions, the same thresholds), 238 → 248 updates applied and 8 → 9
    compatible memories superseded; every group gained or held."""
    whole = statement.strip()
    parts: list[str] = []
    for part in _PARTS.split(whole):
        part = _LEADING.sub("", part.strip(" ,;.!?…\"'“”"))
        if len(part.split()) < 3 or not re.search(r"\bUser\b", part) or part == whole.rstrip(".!?…"):
            continue
        sentence = f"{part[0].upper()}{part[1:]}."
        if sentence not in parts:
            parts.append(sentence)
    return [whole, *parts[:MAX_PARTS]]


def _read(item: JudgeItem) -> list[ScoredMemory]:
    return [hit for hit in item.nearest if hit.score >= MIN_COSINE][:TOP]


@dataclass(frozen=True, slots=True)
class Reading:
    """What the judge read for one candidate: ``hit``, the memory the pair readers find it most likely ends (``None``
    when no memory is near enough), with the cross-encoder's ``score`` and the combined ``chance``; ``someone_else``:
    the candidate is news about someone else and that memory about the user or another relative; ``attribute``: the
    single-valued attribute both are most likely about, with the memory's and the candidate's probability (``None``
    when they differ, either reads as none, or there is no attribute head); ``news``: the news head's logit for the
    candidate alone (0 without the head)."""

    hit: ScoredMemory | None
    score: float = 0.0
    chance: float = 0.0
    someone_else: bool = False
    attribute: tuple[str, float, float] | None = None
    news: float = 0.0

    def gate_passes(self, margin: float, threshold: float) -> bool:
        """The attribute gate: the same attribute, both at least ``margin`` likely, not someone else's news, and
        a combined chance of at least ``threshold``."""
        return (
            self.attribute is not None
            and min(self.attribute[1:]) >= margin
            and not self.someone_else
            and self.chance >= threshold
        )


def _held_texts(hits: Sequence[ScoredMemory]) -> list[str]:
    """The texts of ``hits`` that must be embedded for the attribute head: those whose stored vector is not at hand
    or was embedded from a text with a day in it (the head reads the statement alone)."""
    return [unanchored(h.memory.content) for h in hits if _stored(h) is None]


def _held(hits: Sequence[ScoredMemory], embedded: np.ndarray) -> np.ndarray:
    """The vector of each of ``hits``: its stored one where :func:`_stored` gives it, else the next of ``embedded``."""
    rows, n = [], 0
    for hit in hits:
        vector = _stored(hit)
        if vector is None:
            vector, n = embedded[n], n + 1
        rows.append(np.asarray(vector, dtype=np.float32))
    return np.stack(rows) if rows else np.zeros((0, embedded.shape[1] if embedded.ndim == 2 else 0), np.float32)


def _stored(hit: ScoredMemory) -> np.ndarray | None:
    text = hit.memory.content
    return None if hit.vector is None or unanchored(text) != text else np.asarray(hit.vector)


class LearnedJudge:
    """The learned offline judge. ``embedder``: the engine's; when it is the model the news head was trained on
    (``local:minilm``) the head reads the candidates' embeddings beside the cross-encoder, otherwise (or ``None``)
    the cross-encoder decides alone. ``model``: default the process's shared instance of the shipped cross-encoder
    (closed with the judge only when given); ``card``: default its card; ``head``: default the shipped news head;
    ``attributes``: default the shipped attribute head (read, like the news head, only with its embedder)."""

    name = "offline"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        model: CrossEncoder | None = None,
        card: Card | None = None,
        head: NewsHead | None = None,
        attributes: AttributeHead | None = None,
    ) -> None:
        self._embedder = embedder
        self._own = model is not None
        self._model = model or shared_cross_encoder()
        self._card = card
        self._head = head
        self._attributes = attributes

    def warm(self) -> None:
        """Read the model, its card and the news head now (blocking), so that the first judged turn does not."""
        self._model.load()
        _ = self.card
        _ = self.head
        _ = self.attributes

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

    @property
    def attributes(self) -> AttributeHead | None:
        """The attribute head, when the judge's embedder gives the vectors it reads."""
        if self._embedder is None:
            return None
        head = self._attributes or load_attribute_head()
        return head if self._embedder.name == head.model else None

    async def _vectors(self, texts: list[str]) -> np.ndarray:
        assert self._embedder is not None
        return np.asarray(await self._embedder.embed(texts), dtype=np.float32)

    async def read(self, items: Sequence[JudgeItem]) -> list[Reading]:
        """Per item, what the cross-encoder, the news head and the attribute head read (one ONNX run per pair, one
        embedding call for the candidates and the memories they would end)."""
        read = [_read(item) for item in items]
        seen = [views(unanchored(item.candidate.content)) for item in items]
        pairs = [
            (as_sentence(unanchored(hit.memory.content)), view)
            for hits, texts in zip(read, seen, strict=True)
            for hit in hits
            for view in texts
        ]
        scores = await self._model.score(pairs)
        out: list[Reading] = []
        at = 0
        for item, hits, texts in zip(items, read, seen, strict=True):
            mine = [
                max(float(s) for s in scores[at + n * len(texts) : at + (n + 1) * len(texts)]) for n in range(len(hits))
            ]
            at += len(hits) * len(texts)
            if not hits:
                out.append(Reading(None))
                continue
            best = max(range(len(hits)), key=mine.__getitem__)
            hit = hits[best]
            other = _not_whose(item.candidate.content, item.candidate.evidence, hit.memory.content)
            out.append(Reading(hit, mine[best], mine[best], other))
        asked = [i for i, reading in enumerate(out) if reading.hit is not None]
        head, attributes = self.head, self.attributes
        if not asked or (head is None and attributes is None):
            return out
        said = [unanchored(items[i].candidate.content) for i in asked]
        hits = [r.hit for r in (out[i] for i in asked) if r.hit is not None]
        vectors = await self._vectors(said + (_held_texts(hits) if attributes is not None else []))
        if attributes is not None:
            vectors = np.concatenate([vectors[: len(asked)], _held(hits, vectors[len(asked) :])])
        if head is not None:
            cross = np.asarray([out[i].score for i in asked], dtype=np.float32)
            news = head.news(vectors[: len(asked)])
            chances = head.probability(cross, news)
            for i, chance, logit in zip(asked, chances, news, strict=True):
                out[i] = replace(out[i], chance=float(chance), news=float(logit))
        if attributes is not None:
            for n, i in enumerate(asked):
                out[i] = replace(out[i], attribute=attributes.pair(vectors[len(asked) + n], vectors[n]))
        return out

    async def judge(self, items: Sequence[JudgeItem]) -> list[UpdateVerdict]:
        readings = await self.read(items)
        head, attributes = self.head, self.attributes
        threshold = head.threshold if head is not None else self.card.threshold
        out: list[UpdateVerdict] = []
        for reading in readings:
            hit = reading.hit
            if hit is None:
                out.append(UpdateVerdict.add("no memory near enough to be about the same thing", self.name))
                continue
            with_head = f"; with the news head {reading.chance:.3f}" if head is not None else ""
            same = reading.attribute
            gate = attributes is not None and reading.gate_passes(attributes.margin, attributes.threshold)
            if gate and same is not None and reading.chance < threshold:
                why = (
                    f"both are about the user's {same[0].replace('_', ' ')} (memory {same[1]:.2f}, news "
                    f"{same[2]:.2f}) and the pair reads as news ({reading.score:.3f}{with_head}, cosine "
                    f"{hit.score:.2f})"
                )
                out.append(UpdateVerdict(UpdateKind.SUPERSEDE, hit.memory.id, why, self.name))
                continue
            if reading.chance < threshold:
                why = f"the cross-encoder does not read it as news about a memory (best {reading.score:.3f}{with_head})"
                out.append(UpdateVerdict.add(why, self.name))
                continue
            if reading.someone_else:
                why = "news about someone else leaves what the user's memory says about the user"
                out.append(UpdateVerdict.add(why, self.name))
                continue
            why = f"the cross-encoder reads it as news that ends the memory ({reading.score:.3f}{with_head}"
            why += f", cosine {hit.score:.2f})"
            out.append(UpdateVerdict(UpdateKind.SUPERSEDE, hit.memory.id, why, self.name))
        return out

    async def aclose(self) -> None:
        if self._own:
            self._model.close()
