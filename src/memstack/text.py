"""Words, stems and stop words: the one tokenizer of lexical search, on every backend and in recall's ranking.

A text becomes its words (lower-cased letter/digit runs with diacritics removed, the rules of SQLite FTS5's
``unicode61`` tokenizer) and each word its Porter stem (the stemmer of FTS5's ``porter`` tokenizer, here from the
``snowballstemmer`` package, imported on first use). The stores never stem: they store the stems computed here
(``tokenize``) and look up the stems of a query (``search_terms``), so SQLite and PostgreSQL index and match exactly
the same terms, and an in-memory ranking (:mod:`memstack.retrieval`) sees what the stores see.

Documents keep every token (document length is part of BM25); queries drop stop words, so "what did she say" does
not outrank the one content word of a question. Words longer than :data:`MAX_WORD_CHARS` (a pasted key, a base64
blob) are not words anyone searches for and are left out; a document is indexed up to :data:`MAX_INDEXED_CHARS`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

__all__ = [
    "MAX_INDEXED_CHARS",
    "MAX_WORD_CHARS",
    "STOP_WORDS",
    "query_terms",
    "search_terms",
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


@lru_cache(maxsize=1)
def _stemmer() -> Callable[[str], str]:
    import snowballstemmer

    stem: Callable[[str], str] = snowballstemmer.stemmer("porter").stemWord
    return stem


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # As FTS5's porter tokenizer: words of one or two letters stay as they are ("s" would stem to nothing).
    return word if len(word) < 3 else _stemmer()(word)


def words(text: str) -> list[str]:
    """Letter/digit runs with diacritics removed, lower-cased (FTS5 ``unicode61``), at most
    :data:`MAX_WORD_CHARS` long."""
    folded = unicodedata.normalize("NFKD", text)
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch)).lower()
    return [w for w in _WORD.findall(folded) if len(w) <= MAX_WORD_CHARS]


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
