"""Words, stems and stop words: the one tokenizer of lexical search, on every backend and in recall's ranking.

A text becomes its words (lower-cased letter/digit runs with diacritics removed, the rules of SQLite FTS5's
``unicode61`` tokenizer) and each word its Porter stem (the stemmer of FTS5's ``porter`` tokenizer, here from the
``snowballstemmer`` package, imported on first use). The stores never stem: they store the stems computed here
(``tokenize``) and look up the stems of a query (``search_terms``), so SQLite and PostgreSQL index and match exactly
the same terms, and an in-memory ranking (:mod:`memstack.retrieval`) sees what the stores see.

Documents keep every token (document length is part of BM25); queries drop stop words, so "what did she say" does
not outrank the one content word of a question. Words longer than :data:`MAX_WORD_CHARS` (a pasted key, a base64
blob) are not words anyone searches for and are left out; a document is indexed up to :data:`MAX_INDEXED_CHARS`.

Everything else that compares texts by their words (the dedup rule and consolidation of long-term memories, the
session's diff matching and support check) reads them here too, so "running" is ``run`` and "preferred" ``prefer``
wherever a word is compared: :func:`words` and :func:`stem` (or :func:`content_stems` for the words that carry
content), with negations spelled out first where a "not" matters (:func:`spell_out_negations`). Beside the one list
of :data:`STOP_WORDS` live the word lists named for what else they leave out (:data:`FRAMING_WORDS`,
:data:`GENERIC_TOPIC_WORDS`, :data:`REQUEST_WORDS`) and the ones a comparison reads (:data:`NEGATIONS`,
:data:`NUMBER_WORDS`); :func:`numbers` and :func:`code_words` read numbers and identifiers as written, for the
checks that must find them verbatim.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Iterable
from functools import lru_cache

__all__ = [
    "FRAMING_WORDS",
    "GENERIC_TOPIC_WORDS",
    "MAX_INDEXED_CHARS",
    "MAX_WORD_CHARS",
    "NEGATIONS",
    "NUMBER_WORDS",
    "RELATION_WORDS",
    "REQUEST_WORDS",
    "STOP_WORDS",
    "code_words",
    "comparison_words",
    "content_stems",
    "numbers",
    "query_terms",
    "search_terms",
    "spell_out_negations",
    "stem",
    "tokenize",
    "words",
]

_WORD = re.compile(r"[^\W_]+")

#: Longer letter/digit runs are not indexed (nor searched for).
MAX_WORD_CHARS = 64

#: Characters of a document that are indexed.
MAX_INDEXED_CHARS = 100_000

#: English function words (and the pieces contractions split into) that carry no topic.
_STOP = """
a about above after again against all also am an and any are as at be because been before being below between
both but by can could d did do does doing down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself just ll m me might more most must my myself no nor
not now of off on once only or other ought our ours ourselves out over own re s same shall she should so some
such t than that the their theirs them themselves then there these they this those through to too under until up
ve very was we were what when where which while who whom why will with would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP.split())

#: Words a summary uses to frame a fact ("User prefers …", "Constraint: …") rather than state it: left out when the
#: session compares a fact with the exchange it came from, which need not say them.
FRAMING_WORDS = frozenset(
    """user users assistant constraint constraints preference preferences decision decisions fact facts note notes
    requirement requirements currently now new newly old still stated states said says mentioned noted asked wants
    want wanted prefers prefer preferred likes like liked dislikes dislike needs need needed uses use using used
    working work works project version key value hard exception rule rules instead anymore longer
    goal goals""".split()  # noqa: SIM905
)

#: Words shared by unrelated facts ("likes tea", "likes hiking"): never what memories have in common on their own.
GENERIC_TOPIC_WORDS = frozenset(
    """like love enjoy prefer hate dislike want wants need feel think know get go make have use try lot
    really favorite favourite good great new thing things time day week year people name named""".split()  # noqa: SIM905
)

#: The people (and pets) of a user's life, singular and plural: who "my …" names when it is someone ("my sister",
#: "our dog"), and whom a later "she" or "they" can mean.
RELATION_WORDS = frozenset(
    """sister sisters brother brothers sibling siblings mom mum mother dad father parents parent wife husband partner
    boyfriend girlfriend fiance fiancee spouse son sons daughter daughters kid kids child children baby babies boy
    boys girl girls twin twins friend friends roommate roommates flatmate flatmates housemate housemates cousin
    cousins aunt aunts uncle uncles grandma grandmother grandpa grandfather grandparents granny gran nan niece nephew
    neighbour neighbor neighbours neighbors boss manager colleague colleagues coworker coworkers teammate teammates
    classmate classmates teacher coach doctor therapist landlord family stepmom stepdad ex dog dogs cat cats puppy
    kitten pet pets""".split()  # noqa: SIM905
)

#: Words a request to forget wraps its topic in ("forget everything about my cat"): left out of what a forget by
#: query looks for, so the topic is what must match.
REQUEST_WORDS = frozenset(
    """forget forgotten remove delete erase drop everything anything something all every stuff thing things
    related relating regarding concerning info information details detail mention mentions mentioned
    please""".split()  # noqa: SIM905
)

#: Words that negate what follows ("is not vegetarian", "never eats meat", "without sugar").
NEGATIONS = frozenset({"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "without"})

_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
#: Number words and their values.
NUMBER_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate((*_UNITS.split(), "seventeen", "eighteen", "nineteen"))},
    **{w: i * 10 for i, w in enumerate(_TENS.split(), start=2)},
    "hundred": 100,
    "thousand": 1000,
    "million": 1_000_000,
    "billion": 1_000_000_000,
}

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_COMPARED = re.compile(r"\d+(?:[.,:/-]\d+)+(?![^\W_])|[^\W_]+")
_CODE_WORD = re.compile(r"[A-Za-z0-9_$€£]+(?:[.'’+#/:-][A-Za-z0-9_]+)*\+*")
_NEGATED = re.compile(r"\b(?:(can)(?:not|['’]t)|(won)['’]t|(shan)['’]t)\b|n['’]t\b", re.IGNORECASE)
_SPELLED = {"can": "can", "won": "will", "shan": "shall"}


@lru_cache(maxsize=1)
def _stemmer() -> Callable[[str], str]:
    import snowballstemmer

    stem: Callable[[str], str] = snowballstemmer.stemmer("porter").stemWord
    return stem


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # As FTS5's porter tokenizer: words of one or two letters stay as they are ("s" would stem to nothing).
    return word if len(word) < 3 else _stemmer()(word)


def stem(word: str) -> str:
    """The Porter stem of one word as :func:`words` reads it (lower-cased, diacritics removed): "Running" → ``run``,
    "preferred" → ``prefer``; what the full-text index stores for it."""
    return _stem(_fold(word))


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()


def words(text: str) -> list[str]:
    """Letter/digit runs with diacritics removed, lower-cased (FTS5 ``unicode61``), at most
    :data:`MAX_WORD_CHARS` long."""
    return [w for w in _WORD.findall(_fold(text)) if len(w) <= MAX_WORD_CHARS]


def tokenize(text: str) -> list[str]:
    """Every word of ``text`` (its first :data:`MAX_INDEXED_CHARS` characters) as a Porter stem, in order: how
    documents are indexed."""
    return [_stem(w) for w in words(text[:MAX_INDEXED_CHARS])]


def query_terms(text: str) -> list[str]:
    """The distinct content-word stems of a query, in order of first appearance."""
    return list(dict.fromkeys(_stem(w) for w in words(text) if w not in STOP_WORDS))


def search_terms(text: str) -> list[str]:
    """What a full-text search looks up: :func:`query_terms`, or every word's stem when the query is made of stop
    words only (a search for "who" still finds the memories that say it)."""
    return query_terms(text) or list(dict.fromkeys(_stem(w) for w in words(text)))


def comparison_words(text: str) -> list[str]:
    """:func:`words` as texts are compared word by word (the dedup rule, consolidation, the session's support
    check): negated contractions spelled out (:func:`spell_out_negations`: "isn't" → ``is``, ``not``) and a number
    written with separators kept whole ("3.12", "10:30", "1,000", "2024-05-16"), so "3.12" against "3.13" is one
    word changed, not a "3" in common."""
    return [w for w in _COMPARED.findall(_fold(spell_out_negations(text))) if len(w) <= MAX_WORD_CHARS]


def content_stems(text_words: Iterable[str], *, ignore: Collection[str] = ()) -> list[str]:
    """The stems of the words (from :func:`words` or :func:`comparison_words`) that are neither :data:`STOP_WORDS`
    nor in ``ignore``, in order, repeats kept."""
    return [_stem(w) for w in text_words if w not in STOP_WORDS and w not in ignore]


def spell_out_negations(text: str) -> str:
    """``text`` with negated contractions written out, so a negation is the word "not" (either apostrophe):
    "don't" → "do not", "can't" and "cannot" → "can not", "won't" → "will not"."""

    def spelled(m: re.Match[str]) -> str:
        verb = m.group(1) or m.group(2) or m.group(3)
        if verb is None:
            return " not"
        out = _SPELLED[verb.lower()]
        return f"{verb[0]}{out[1:]} not" if verb[0].isupper() else f"{out} not"

    return _NEGATED.sub(spelled, text)


def numbers(text: str) -> list[str]:
    """Numbers as written, in order: runs of digits joined by ``. , : / -`` ("3.5", "10:30", "1,000", "2024-05-16",
    "5/16"); an ordinal's digits ("3rd" → "3")."""
    return _NUMBER.findall(text)


def code_words(text: str) -> list[str]:
    """Words as names and code are written, case kept: ``numpy.array``, ``C++``, ``snake_case``, ``v1.2``, ``$5``,
    ``don't`` are one word each. What a check that a name was said compares; never what search indexes."""
    return [t.rstrip(".:'’-").replace("’", "'") for t in _CODE_WORD.findall(text)]
