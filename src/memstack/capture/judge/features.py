"""What the offline update judge reads of a (memory, statement) pair: their embeddings, and a few general cues.

The embeddings carry the topic and much of the meaning: their elementwise product and distance say whether the two
texts are about the same thing, the statement's own embedding what kind of statement it is (a change, an event, a
state). The cues are general properties of English statements that sentence embeddings read poorly, each a small word
list, none written for one sentence:

* :data:`CHANGE_WORDS` — words that say something changed, ended or began (a cue the head weighs, never a gate);
* :data:`ADDITIVE` — "also", "too", "another": news beside what is known;
* :data:`HYPOTHETICAL` — "if", "maybe", "thinking about": not news yet;
* :data:`~memstack.text.NEGATIONS` and "n't" — on either side;
* someone else as the subject ("User's sister …", "Robert's father …": :data:`~memstack.text.RELATION_WORDS`);
* word overlap of the two texts (Jaccard, how much of the memory the statement repeats, how much of the statement is
  new), a name in one that the other does not have, and a changed number;
* whether both are about the same single-valued attribute of the user (residence, employer, partner, …), from the
  learned :mod:`~memstack.capture.judge.attributes` head: the news that gives such an attribute a new value.

Each cue is also multiplied by the texts' cosine, and the new words, the change words and someone else as the
subject by the shared attribute, so a linear head can weigh each by how related the two texts are.
:func:`pair_features` is the one definition used by training (``python -m tests.capture.train_judge``) and by the
judge at run time; changing it means retraining the head (its file records :data:`FEATURES_VERSION`).
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

from memstack.capture.judge.attributes import SINGLE_VALUED
from memstack.text import NEGATIONS, RELATION_WORDS, comparison_words, content_stems, numbers

__all__ = ["ADDITIVE", "CHANGE_WORDS", "FEATURES_VERSION", "HYPOTHETICAL", "about_someone_else", "pair_features"]

#: Bumped whenever :func:`pair_features` changes; a head trained on other features is refused.
FEATURES_VERSION = 2

#: Words that say something changed, ended or began.
CHANGE_WORDS = re.compile(
    r"\b(?:no longer|anymore|any more|any longer|no more|stopp?ed|stopping|quit|quitting|gave up|given up|left|"
    r"moved|moving|relocated|transferred|switched|changed|swapped|traded|replaced|sold|lost|split|divorced|"
    r"separated|broke up|ended|over|passed away|died|put down|rehomed|cancell?ed|called off|scrapped|postponed|"
    r"rescheduled|pushed back|delayed|fell through|retired|resigned|fired|laid off|let go|promoted|became|"
    r"now|these days|nowadays|from now on|instead|again|new|finally|finished|completed|graduated|started|turned|"
    r"dropped|ditched|dumped|done with|cut out|healed|recovered|since|used to|broke|broken|stole|stolen|ran away|"
    r"decided|withdrew|pulled out|backed out|stepped down|deleted|goodbye|after all|make it)\b",
    re.IGNORECASE,
)
ADDITIVE = re.compile(r"\b(?:also|too|as well|another|a second|one more|in addition)\b", re.IGNORECASE)
HYPOTHETICAL = re.compile(
    r"\b(?:if|maybe|might|perhaps|thinking (?:about|of)|considering|someday|one day|wish|dream(?:ing)? of|"
    r"would (?:love|like)|could)\b",
    re.IGNORECASE,
)
_NOT = re.compile(r"n['’]t\b", re.IGNORECASE)
_PEOPLE = RELATION_WORDS - {"dog", "dogs", "cat", "cats", "puppy", "kitten", "pet", "pets"}
_POSSESSOR = re.compile(r"^(?:User['’]s\s+(?P<rel>\w+)|(?P<name>[A-Z][\w-]+)['’]s\s+\w+)")
_SAID = re.compile(r"^(?:Asked .*?, )?User said:\s*[\"“]?")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w-]+")
_SINGLE = len(SINGLE_VALUED)

Vector = npt.NDArray[np.float32]


def about_someone_else(text: str) -> bool:
    """The statement's subject is someone else: "User's sister …", "Robert's father …" (a possessive before the
    subject, other than the user's own things), also in the user's words kept as said ("User said: Robert's …")."""
    m = _POSSESSOR.match(_SAID.sub("", text.strip()))
    if m is None:
        return False
    return m.group("name") is not None or (m.group("rel") or "").lower() in _PEOPLE


def _negated(text: str) -> bool:
    return bool(_NOT.search(text)) or any(w in NEGATIONS for w in text.lower().split())


def _names(text: str) -> set[str]:
    """Capitalised words inside the text (not the first word of a sentence, not "User")."""
    return {m.group(0).lower() for m in _NAME.finditer(text)} - {"user", "user's", "i"}


def _cues(statement: str, memory: str) -> list[float]:
    said = set(content_stems(comparison_words(statement)))
    known = set(content_stems(comparison_words(memory)))
    shared = said & known
    said_numbers, known_numbers = set(numbers(statement)), set(numbers(memory))
    said_names, known_names = _names(statement), _names(memory)
    return [
        float(about_someone_else(statement)),
        float(about_someone_else(memory)),
        float(bool(CHANGE_WORDS.search(statement))),
        float(bool(ADDITIVE.search(statement))),
        float(bool(HYPOTHETICAL.search(statement))),
        float(_negated(statement)),
        float(_negated(memory)),
        len(shared) / max(1, len(said | known)),
        len(shared) / max(1, len(known)),
        len(said - known) / max(1, len(said)),
        float(bool(said_names - known_names)),
        float(bool(known_names - said_names)),
        float(bool(said_numbers and known_numbers and said_numbers != known_numbers)),
    ]


def pair_features(
    statement: str, memory: str, said: Vector, known: Vector, said_attributes: Vector, known_attributes: Vector
) -> Vector:
    """The features of one pair: ``said`` and ``known`` are the unit embeddings of ``statement`` and ``memory``,
    ``said_attributes`` and ``known_attributes`` their attribute distributions."""
    cosine = float(said @ known)
    cues = np.asarray(_cues(statement, memory), dtype=np.float32)
    same = float(said_attributes[:_SINGLE] @ known_attributes[:_SINGLE])  # both about one single-valued attribute
    kind = int(np.argmax(said_attributes))
    agree = float(kind < _SINGLE and kind == int(np.argmax(known_attributes)))  # and the likeliest one for both
    shared = [same, same * cues[9], same * cues[2], same * cues[0], same * cues[10], same * cosine]
    shared += [agree, agree * cues[9], agree * cues[2], agree * cues[0], agree * cues[10], agree * cues[12]]
    return np.concatenate(
        [said * known, np.abs(said - known), said, [cosine], cues, cues * cosine, shared, said_attributes]
    ).astype(np.float32)
