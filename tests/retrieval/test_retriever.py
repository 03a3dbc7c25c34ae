from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstack.embed import get_embedder
from memstack.errors import DimensionMismatch, InputError
from memstack.retrieval import HybridRetriever, Passage, RetrievalSettings, Retriever

T0 = datetime(2023, 5, 8, 13, 0)

SESSIONS = [
    (
        T0,
        [
            "Caroline: What have you been researching lately?",
            "Melanie: Adoption agencies, mostly the ones near Boston.",
            "Caroline: That's wonderful, good luck!",
        ],
    ),
    (
        T0 + timedelta(days=30),
        [
            "Melanie: I painted a lake sunrise over the weekend.",
            "Caroline: Beautiful colours in that painting.",
            "Melanie: Thanks! Painting helps me relax.",
        ],
    ),
    (
        T0 + timedelta(days=60),
        [
            "Caroline: Lake camping with the kids!",
            "Melanie: Camping is the best, we roasted marshmallows.",
        ],
    ),
]


def _passages() -> list[Passage]:
    return [
        Passage(f"D{s}:{t}", text, at, f"session-{s}")
        for s, (at, texts) in enumerate(SESSIONS, start=1)
        for t, text in enumerate(texts, start=1)
    ]


def _lexical(settings: RetrievalSettings | None = None) -> HybridRetriever:
    retriever = HybridRetriever(settings)
    retriever.add(_passages())
    return retriever


def test_is_a_retriever() -> None:
    assert isinstance(HybridRetriever(), Retriever)


def test_answer_turn_is_found_by_the_words_of_the_question_before_it() -> None:
    query = "Which things were researched?"
    with_context = _lexical().search(query, k=2)
    assert with_context[0].passage.id in {"D1:1", "D1:2"}
    assert "D1:2" in [h.passage.id for h in with_context]
    alone = _lexical(RetrievalSettings(context_turns=0, neighbour_weight=0)).search(query, k=3)
    assert "D1:2" not in [h.passage.id for h in alone if h.score > 0]


def test_thread_prior_ranks_the_session_about_the_topic_first() -> None:
    hits = _lexical().search("lake painting", k=3)
    assert {h.passage.id for h in hits} == {"D2:1", "D2:2", "D2:3"}
    plain = RetrievalSettings(thread_weight=0, neighbour_weight=0, context_turns=0)
    flat = [h.passage.id for h in _lexical(plain).search("lake relax", k=8)]
    with_prior = RetrievalSettings(thread_weight=1.0, neighbour_weight=0, context_turns=0)
    prior = [h.passage.id for h in _lexical(with_prior).search("lake relax", k=8)]
    assert flat.index("D3:1") < flat.index("D2:1")  # the shorter turn wins on its own
    assert prior.index("D2:1") < prior.index("D3:1")  # its session is also about relaxing


def test_time_expression_prefers_items_in_that_range_and_is_not_matched_as_words() -> None:
    retriever = _lexical(RetrievalSettings(thread_weight=0, neighbour_weight=0, context_turns=0))
    now = T0 + timedelta(days=90)
    in_july = retriever.search("lake in July 2023", k=1, now=now)
    in_june = retriever.search("lake in June 2023", k=1, now=now)
    assert in_july[0].passage.id == "D3:1" and in_june[0].passage.id == "D2:1"
    assert in_july[0].time_range is not None and in_july[0].time_range.text == "in July 2023"
    aware = retriever.search("lake two months ago", k=1, now=now.replace(tzinfo=UTC))
    assert aware[0].passage.id == "D2:1"


def test_dense_scores_fuse_with_lexical() -> None:
    emb = get_embedder("hash:64")
    passages = _passages()
    retriever = HybridRetriever()
    retriever.add(passages, emb.embed_sync([p.text for p in passages]))  # type: ignore[attr-defined]
    query = "roasted marshmallows"
    hits = retriever.search(query, emb.embed_sync([query])[0], k=3)  # type: ignore[attr-defined]
    assert hits[0].passage.id == "D3:2"
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].score >= hits[1].score >= hits[2].score
    only_dense = retriever.search("zzz unknown words", emb.embed_sync([query])[0], k=1)  # type: ignore[attr-defined]
    assert only_dense[0].passage.id == "D3:2"


def test_passage_weight_is_a_prior() -> None:
    retriever = HybridRetriever(RetrievalSettings(thread_weight=0, neighbour_weight=0, context_turns=0))
    retriever.add([Passage("a", "likes green tea"), Passage("b", "likes green tea", weight=2.0)])
    assert retriever.search("green tea", k=1)[0].passage.id == "b"


def test_windows_merge_overlaps_and_keep_thread_order() -> None:
    retriever = _lexical()
    by_id = {p.id: p for p in retriever.passages}
    hits = retriever.search("camping marshmallows", k=2)
    assert {h.passage.id for h in hits} == {"D3:1", "D3:2"}
    windows = retriever.windows(hits)
    assert [[p.id for p in w] for w in windows] == [["D3:1", "D3:2"]]
    far_apart = [h for h in retriever.search("adoption", k=1)] + hits[:1]
    assert len(retriever.windows(far_apart)) == 2
    assert retriever.windows(hits, before=0)[0][0] == by_id["D3:1"]


def test_incremental_adds_are_searchable() -> None:
    retriever = _lexical()
    assert len(retriever) == 8
    retriever.add([Passage("D3:3", "Caroline: Next time let's go kayaking.", T0 + timedelta(days=60), "session-3")])
    assert retriever.search("kayaking", k=1)[0].passage.id == "D3:3"
    assert retriever.search("kayaking", k=3)[1].passage.id == "D3:2"  # its previous turn shares the key


def test_bad_input_is_refused_with_a_reason() -> None:
    retriever = HybridRetriever()
    with pytest.raises(InputError, match="one vector per passage"):
        retriever.add([Passage("a", "x")], np.zeros((2, 4), dtype=np.float32))
    retriever.add([Passage("a", "x")], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(DimensionMismatch):
        retriever.add([Passage("b", "y")], np.ones((1, 5), dtype=np.float32))
    with pytest.raises(InputError, match="holds vectors"):
        retriever.add([Passage("b", "y")])
    with pytest.raises(DimensionMismatch):
        retriever.search("x", np.ones(3, dtype=np.float32))
    with pytest.raises(InputError, match="positive"):
        retriever.search("x", k=0)
    with pytest.raises(InputError, match="id"):
        Passage("", "text")
    with pytest.raises(InputError, match="unique"):
        retriever.add([Passage("a", "again")], np.ones((1, 4), dtype=np.float32))
    with pytest.raises(InputError, match="not a passage"):
        retriever.windows(HybridRetriever().search("x") or _lexical().search("lake", k=1))
    with pytest.raises(InputError, match="weights"):
        RetrievalSettings(dense_weight=-1)
    assert HybridRetriever().search("anything") == []
