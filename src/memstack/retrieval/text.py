"""Tokenizing for lexical search, the same way SQLite FTS5's ``porter unicode61`` tokenizer does.

Documents keep every token (document length is part of BM25); queries drop stop words, so "what did she
say" does not outrank the one content word of a question. Stems are Porter's (the stemmer FTS5 uses), from the
``snowballstemmer`` package, imported on first use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

__all__ = ["STOP_WORDS", "query_terms", "tokenize", "words"]

_WORD = re.compile(r"[^\W_]+")

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
    return _stemmer()(word)


def words(text: str) -> list[str]:
    """Lower-cased letter/digit runs with diacritics removed (FTS5 ``unicode61``)."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _WORD.findall(folded)


def tokenize(text: str) -> list[str]:
    """Every word of ``text`` as a Porter stem: how documents are indexed."""
    return [_stem(w) for w in words(text)]


def query_terms(text: str) -> list[str]:
    """The distinct content-word stems of a query, in order of first appearance."""
    return list(dict.fromkeys(_stem(w) for w in words(text) if w not in STOP_WORDS))
