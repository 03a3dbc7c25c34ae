import sqlite3

import numpy as np
import pytest

from memstack.errors import InputError
from memstack.retrieval import BM25Index, query_terms, tokenize, words

CORPUS = [
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "Painting is a fun way to express my feelings; I painted a lake sunrise last year.",
    "We're thinking about adoption agencies, researching them all week.",
    "The kids and I went swimming, then camping by the lake.",
    "Café crème at the café: I'm hooked on coffee",
    "support support support group",
]


def test_tokenize_stems_like_porter_and_folds_case_and_accents() -> None:
    assert tokenize("Researching Adoption AGENCIES") == ["research", "adopt", "agenc"]
    assert words("Café crème, naïve!") == ["cafe", "creme", "naive"]
    assert words("snake_case I'm") == ["snake", "case", "i", "m"]


def test_query_terms_drop_stop_words_and_repeats() -> None:
    assert query_terms("What did Caroline research, and what did she research?") == ["carolin", "research"]
    assert query_terms("what did she do") == []


def _fts5_scores(docs: list[str], query: list[str]) -> dict[int, float]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", [(i, d) for i, d in enumerate(docs)])
    match = " OR ".join(f'"{w}"' for w in query)
    return {rowid: -score for rowid, score in db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (match,))}


@pytest.mark.parametrize(
    "query", ["support group", "lake painting sunrise", "adoption agencies research", "coffee cafe", "kids swimming"]
)
def test_bm25_scores_equal_sqlite_fts5_bm25(query: str) -> None:
    index = BM25Index()
    for doc in CORPUS:
        index.add(doc)
    ours = index.scores(query_terms(query))
    theirs = _fts5_scores(CORPUS, [w for w in words(query)])
    assert set(np.flatnonzero(ours)) == set(theirs)
    for doc, score in theirs.items():
        assert ours[doc] == pytest.approx(score, rel=1e-9)


def test_bm25_prefers_rare_terms_and_saturates_term_frequency() -> None:
    index = BM25Index()
    for doc in CORPUS:
        index.add(doc)
    s = index.scores(["support"])
    assert s[5] > s[0] > 0  # three occurrences beat one, but not threefold
    assert s[5] < 3 * s[0]
    assert index.idf("lake") < index.idf("adopt")
    assert index.scores(["absent"]).sum() == 0


def test_empty_index_and_bad_parameters() -> None:
    assert BM25Index().scores(["x"]).shape == (0,)
    with pytest.raises(InputError, match="k1"):
        BM25Index(k1=-1)
    with pytest.raises(InputError, match="b="):
        BM25Index(b=2)
