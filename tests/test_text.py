"""The one tokenizer (``memstack.text``): what every full-text index and every lexical ranking is built from."""

from __future__ import annotations

import sqlite3

import pytest

from memstack.text import (
    MAX_WORD_CHARS,
    code_words,
    comparison_words,
    content_stems,
    numbers,
    query_terms,
    search_terms,
    spell_out_negations,
    stem,
    tokenize,
    words,
)

TRICKY = [
    "It's a U.S. bus, as is: s",
    "Café crème, naïve façade; Ärger über Öl",
    "ℌello ﬁne ² snake_case CamelCase 2024-05-01 3.14 v2",
    "日本語のテキスト 中文 한국어 русский текст Ελληνικά",
    "emoji 🎉 ✓ — «quotes» “smart” 'single' x" + "y" * 100,
    "tab\tnew\nline\r\nzero\u200bwidth non\u00a0breaking",
]


def test_short_words_are_kept_as_they_are_never_emptied() -> None:
    assert tokenize("It's as is, us") == ["it", "s", "as", "is", "us"]
    assert all(tokenize(text) for text in TRICKY)
    assert all(term for text in TRICKY for term in tokenize(text))


def test_folding_and_long_words() -> None:
    assert words("ℌello ﬁne Ärger") == ["hello", "fine", "arger"]  # compatibility forms fold, then lower-case
    assert words("a" * MAX_WORD_CHARS + " " + "b" * (MAX_WORD_CHARS + 1) + " ok") == ["a" * MAX_WORD_CHARS, "ok"]


def test_search_terms_fall_back_to_stop_words_only_when_nothing_else_is_left() -> None:
    assert search_terms("What did she say about running?") == query_terms("say about running") == ["sai", "run"]
    assert search_terms("who is it") == ["who", "is", "it"]
    assert search_terms("?!") == []


@pytest.mark.parametrize("text", TRICKY)
def test_fts5_ascii_tokenizer_reads_stored_terms_back_unchanged(text: str) -> None:
    """SQLite indexes the space-joined stems with FTS5's ``ascii`` tokenizer: it must split them exactly there."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(terms, tokenize='ascii')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    terms = tokenize(text)
    db.execute("INSERT INTO t (rowid, terms) VALUES (1, ?)", (" ".join(terms),))
    assert [row[0] for row in db.execute("SELECT term FROM v ORDER BY offset")] == terms
    for term in set(terms):
        assert db.execute("SELECT COUNT(*) FROM t WHERE t MATCH ?", (f'"{term}"',)).fetchone()[0] == 1


# Every caller that compares words reads them here: search, the dedup rule and consolidation of memories, and the
# session's diff matching and support check once stemmed "running" as run / runn / run and "preferred" as
# prefer / preferr / prefer.
@pytest.mark.parametrize(
    ("written", "other", "stemmed"),
    [("running", "runs", "run"), ("preferred", "prefers", "prefer"), ("Stopped", "stopping", "stop")],
)
def test_a_word_has_one_stem_in_every_caller(written: str, other: str, stemmed: str) -> None:
    from memstack.capture.dedup import pair_features
    from memstack.session.text import content_words, similarity

    assert stem(written) == stem(other) == stemmed
    assert tokenize(written) == search_terms(other) == [stemmed]  # what the stores index and look up
    assert content_words(written) == content_words(other) == {stemmed}  # the session's comparisons
    assert similarity(f"Ana {written} daily", f"Ana {other} daily") == 1.0
    features = pair_features(f"User {written} tea", f"User {other} tea", 0.9)  # the dedup rule
    assert (features.overlap, features.missing) == (1.0, 0.0)


def test_comparison_words_spell_out_negations_and_keep_numbers_whole() -> None:
    assert comparison_words("She isn't 3.12, can't, won’t: 10:30 on 3rd May") == [
        *("she", "is", "not", "3.12", "can", "not", "will", "not", "10:30", "on", "3rd", "may"),
    ]
    assert words("isn't 3.12") == ["isn", "t", "3", "12"]  # what search indexes does not change
    assert spell_out_negations("Cannot. Don't") == "Can not. Do not"
    assert numbers("v3.12 costs 1,000 on 2024-05-16") == ["3.12", "1,000", "2024-05-16"]
    assert code_words("numpy.array, C++ and snake_case.") == ["numpy.array", "C++", "and", "snake_case"]
    assert content_stems(words("User likes the running club"), ignore={"user"}) == ["like", "run", "club"]
