"""Full-text search as both stores do it: the same stored terms, the same query terms, the same BM25.

A text is indexed as its stems, computed here in Python by :mod:`memstack.text` and stored beside it (``terms`` and
their count ``n_terms``); the database only indexes and matches those terms, it never tokenizes or stems:

- SQLite: an FTS5 table over the space-joined terms with the ``ascii`` tokenizer, which splits them at the spaces
  and nowhere else (stems are lower-case letter/digit runs) and stems nothing;
- PostgreSQL: ``terms text[]`` behind a GIN index, matched with ``&&`` (any term) or ``@>`` (every term): no
  parser, no dictionary, no server locale between the stems and the index.

A query is its :func:`~memstack.text.search_terms`, so "Running" finds "runs" and "bakeries" finds "bakery" on
both. Matches are ranked by BM25 (:mod:`memstack.retrieval.bm25`: k1 1.2, b 0.75, FTS5's idf) with the statistics
of the user's own collection: N and the average length over the user's documents (active memories; archived
exchanges), n over the user's matching documents. A user's ranking never depends on another user's data. SQLite
ranks the matched rows in Python with :func:`rank`; PostgreSQL computes the same formula in SQL (:func:`pg_bm25`),
so both order the same rows the same way (scores agree to rounding). Ties: the newest row first.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TypeVar

import numpy as np

from memstack.retrieval.bm25 import K1, B, bm25_scores
from memstack.text import search_terms, tokenize

__all__ = [
    "BM25_PARAMS",
    "exchange_terms",
    "fts5_match",
    "pg_bm25",
    "rank",
    "searched_terms",
    "term_ids",
    "text_terms",
]

K = TypeVar("K")


def text_terms(text: str) -> list[str]:
    """The stored terms of one text (a memory's content), in order."""
    return tokenize(text)


def exchange_terms(user_text: str, assistant_text: str) -> list[str]:
    """The stored terms of an archived exchange: the user's message, then the reply."""
    return tokenize(user_text) + tokenize(assistant_text)


def searched_terms(text: str) -> list[str] | None:
    """The terms a search looks up, :func:`memstack.text.search_terms` (``None`` when the text has no word:
    nothing can match)."""
    return search_terms(text) or None


@lru_cache(maxsize=65536)
def _term_id(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def term_ids(terms: Iterable[str]) -> list[int]:
    """Stems as 64-bit ids (BLAKE2b), where a table is read row by row for term counts: integers compare several
    times faster than text. Two stems share an id with odds of about 1 in 10^19 per pair (for a million distinct
    stems, 1 in 30 million that any two do), and the ids never leave the database they index."""
    return [_term_id(t) for t in terms]


def fts5_match(owner: str, terms: Sequence[str], *, any_word: bool) -> str:
    """An FTS5 query for ``terms`` within one user's rows (``owner``: the user's token). Terms are quoted, though a
    stem never holds a quote or an operator: what a user typed is searched for, never executed."""
    joined = (" OR " if any_word else " AND ").join(f'"{t}"' for t in terms)
    return f"fts_owner : {owner} AND terms : ({joined})"


def rank(
    matches: Sequence[tuple[K, str]], terms: Sequence[str], n_docs: int, total: int, k: int
) -> list[tuple[K, float]]:
    """BM25 of the rows that matched (``(key, stored terms)``, keys ascending by age) for the query ``terms``:
    the ``k`` best as ``(key, score)``, best first, the newest first among equals. ``n_docs`` and ``total`` (the
    sum of ``n_terms``) are those of the user's whole collection."""
    if not matches or not terms:
        return []
    counts = [Counter(stored.split()) for _, stored in matches]
    tf = np.array([[c.get(t, 0) for t in terms] for c in counts], dtype=np.float64)
    lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
    df = [int(n) for n in (tf > 0).sum(axis=0)]
    scores = bm25_scores(tf, lengths, df, n_docs, total)
    order = sorted(range(len(matches)), key=lambda i: (-scores[i], -i))
    return [(matches[i][0], float(scores[i])) for i in order[:k] if scores[i] > 0]


def pg_bm25(table: str, key: str, scope: str, match: str = "") -> str:
    """A PostgreSQL query yielding ``(key, score)`` for the rows of ``table`` (aliased ``d``; ``key`` names a
    column of it) that hold any of ``%(terms)s``: ``scope`` selects the user's collection (the statistics),
    ``match`` narrows the rows ranked. The arithmetic is :func:`~memstack.retrieval.bm25.bm25_scores`': per term
    ``idf = greatest(ln((N - n + 0.5) / (n + 0.5)), 1e-6)`` times ``tf (k1 + 1) / (tf + k1 (1 - b + b |d| /
    avgdl))``, with ``%(k1)s`` and ``%(b)s``."""
    return f"""
    WITH matched AS (
        SELECT d.{key} AS key, d.terms, d.n_terms FROM {table} AS d
        WHERE {scope}{match} AND d.terms && %(terms)s::text[]
    ), stats AS (
        SELECT count(*)::float8 AS n_docs, coalesce(sum(d.n_terms), 0)::float8 AS total FROM {table} AS d
        WHERE {scope}
    ), tf AS (
        SELECT m.key, m.n_terms, q.term, cardinality(array_positions(m.terms, q.term))::float8 AS tf
        FROM matched AS m CROSS JOIN unnest(%(terms)s::text[]) AS q(term)
    ), df AS (
        SELECT term, count(*) FILTER (WHERE tf > 0)::float8 AS df FROM tf GROUP BY term
    )
    SELECT tf.key, sum(
        greatest(ln((s.n_docs - df.df + 0.5) / (df.df + 0.5)), 1e-6) * tf.tf * (%(k1)s::float8 + 1.0)
        / (tf.tf + %(k1)s::float8 * (1.0 - %(b)s::float8 + %(b)s::float8 * tf.n_terms / (s.total / s.n_docs)))
    ) AS score
    FROM tf JOIN df USING (term) CROSS JOIN stats AS s WHERE tf.tf > 0 GROUP BY tf.key
    """


#: The BM25 parameters every full-text query of the stores passes (``%(k1)s``, ``%(b)s``).
BM25_PARAMS = {"k1": K1, "b": B}
