"""What a forgotten memory hides (issue 23), as every backend applies it: ``store.memories.forget(hide=...)`` records
an exchange, a fact and a line as hidden by the memory; every read that feeds a model leaves them out (the session's
state, the lines of past sessions, full-text and vector recall of the archive, recall's in-memory index in another
process); the record (``archive.turns``, the export) keeps them; a restore shows exactly them again; a permanent
delete keeps them hidden; erasure removes the rows.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memstack.errors import InputError, NotFound
from memstack.recall import ArchiveIndex
from memstack.retrieval import RetrievalSettings
from memstack.retrieval.archive import ArchiveQuery
from memstack.store.base import Store
from memstack.types import (
    ArchivedTurn,
    DeletedBy,
    Fact,
    HiddenItem,
    HiddenKind,
    NewMemory,
    TurnCommit,
    TurnStatus,
    TurnSummary,
    TurnVectors,
)

from .conftest import StoreFactory, Vectors
from .test_archive_search_contract import ALICE, BOB, DIM, NOW, QUERIES, _fill, _reference, _same

CAT = [
    ("I just adopted a cat named Miso", "Miso is a lovely name!"),
    ("I also started a jazz piano course", "Jazz piano is fun."),
]
FACTS = (Fact("Has a cat named Miso", since_turn=1), Fact("Takes a jazz piano course", since_turn=2))
LINE = "Adopted Miso; started jazz piano"


def _hide() -> list[HiddenItem]:
    return [
        HiddenItem(HiddenKind.TURN, "cat", 1),
        HiddenItem(HiddenKind.FACT, "cat", text=FACTS[0].text),
        HiddenItem(HiddenKind.LINE, "cat", text=LINE),
    ]


async def _cat_session(store: Store, rng: np.random.Generator) -> None:
    held = await store.sessions.acquire(ALICE, "cat")
    try:
        state = await store.sessions.open(ALICE, "cat")
        for n, (u, a) in enumerate(CAT, start=1):
            turn = ArchivedTurn("cat", n, u, a, NOW + timedelta(minutes=n))
            await store.sessions.record(ALICE, turn, lease=held.lease)
            facts = FACTS[:n]
            summary = TurnSummary(n, f"User said: {u}", f"Assistant said: {a}")
            commit = TurnCommit(n, TurnStatus.SUMMARIZED, summary, facts, state.version)
            await store.sessions.commit(ALICE, "cat", commit, lease=held.lease)
            state = await store.sessions.open(ALICE, "cat")
    finally:
        await held.release()
    await store.sessions.end(ALICE, "cat", LINE, through_turn=2, ended=True)
    vectors = [TurnVectors("cat", n, rng.normal(size=DIM), rng.normal(size=DIM)) for n in (1, 2)]
    await store.archive_vectors.put(ALICE, vectors)


async def _memory(store: Store, vecs: Vectors, text: str = "User adopted a cat named Miso") -> str:
    [memory] = await store.memories.add_many(ALICE, [NewMemory(text, source_turn_ids=("cat:1",))], vecs.many(1))
    return memory.id


async def test_a_forget_hides_the_exchange_fact_and_line_from_every_read_until_restored(
    store: Store, vecs: Vectors
) -> None:
    rng = np.random.default_rng(7)
    await _fill(store, ALICE, rng)
    await _cat_session(store, rng)
    memory_id = await _memory(store, vecs)
    before = await store.hidden.version(ALICE)
    forgotten = await store.memories.forget(ALICE, memory_id, by=DeletedBy.USER, hide=_hide())
    assert not forgotten.is_active
    assert await store.hidden.version(ALICE) != before
    assert await store.hidden.hidden(BOB) == []
    hidden = await store.hidden.hidden(ALICE)
    assert [(i.kind, i.session_id, i.turn, i.text, i.memory_id) for i in hidden] == [
        (HiddenKind.TURN, "cat", 1, "", memory_id),
        (HiddenKind.FACT, "cat", 0, FACTS[0].text, memory_id),
        (HiddenKind.LINE, "cat", 0, LINE, memory_id),
    ]

    # the session's state: the raw window, the turn log and base truth leave them out
    state = await store.sessions.open(ALICE, "cat")
    assert [m.turn for m in state.raw_window] == [2, 2] and [t.turn for t in state.turn_log] == [2]
    assert state.base_truth == (FACTS[1],) and state.turn_count == 2 and state.version > 0
    # the line of a past session: empty in listings, skipped by layer 7's read
    assert "cat" not in {s.session_id for s in await store.archive.sessions(ALICE, with_line=True)}
    [listed] = await store.archive.sessions(ALICE, session_id="cat")
    assert listed.line == "" and listed.turn_count == 2
    # full-text and vector recall of the archive
    assert await store.archive.search(ALICE, "Miso", 10) == []
    assert [h.turn_id for h in await store.archive.search(ALICE, "jazz piano", 10)] == ["cat:2"]
    reference = await _reference(store, ALICE, RetrievalSettings())
    reference.hide([("cat", 1)])
    for text in ["Miso the cat", "jazz piano", *QUERIES]:
        query = ArchiveQuery.of(text, rng.normal(size=DIM), RetrievalSettings(), now=NOW)
        found = await store.archive_vectors.search(ALICE, query, 50)
        _same(found, reference.rank(query, 50))
        assert not any(m.message.session_id == "cat" and m.message.turn == 1 for m in found)
        assert not any(m.previous and (m.previous.session_id, m.previous.turn) == ("cat", 1) for m in found)
    # the record keeps them: listing turns, the texts a forget reads, the export
    assert [t.turn for t in await store.archive.turns(ALICE, session_id="cat")] == [1, 2]
    assert [(sid, line, facts) for sid, line, facts in await store.hidden.session_texts(ALICE, ["cat"])] == [
        ("cat", LINE, FACTS)
    ]
    exported = [r.data for r in [r async for r in store.users.export(ALICE)] if r.kind == "memory"]
    hides = [(h["kind"], h["session_id"]) for m in exported for h in m["hides"]]
    assert hides == [("turn", "cat"), ("fact", "cat"), ("line", "cat")]

    # a turn committed meanwhile keeps the hidden fact (its summarizer never saw it), without showing it
    held = await store.sessions.acquire(ALICE, "cat")
    try:
        state = await store.sessions.open(ALICE, "cat")
        await store.sessions.record(ALICE, ArchivedTurn("cat", 3, "Any plans?", "Rest.", NOW), lease=held.lease)
        new = (*state.base_truth, Fact("Wants to rest", since_turn=3))
        commit = TurnCommit(3, TurnStatus.SUMMARIZED, TurnSummary(3, "plans", "rest"), new, state.version)
        await store.sessions.commit(ALICE, "cat", commit, lease=held.lease)
    finally:
        await held.release()
    assert (await store.sessions.open(ALICE, "cat")).base_truth == new

    # restore: exactly what was hidden is back
    await store.memories.restore(ALICE, memory_id)
    assert await store.hidden.hidden(ALICE) == []
    state = await store.sessions.open(ALICE, "cat")
    assert [t.turn for t in state.turn_log] == [1, 2, 3]
    assert {f.text for f in state.base_truth} == {FACTS[0].text, FACTS[1].text, "Wants to rest"}
    assert "cat" in {s.session_id for s in await store.archive.sessions(ALICE, with_line=True)}
    assert [h.turn_id for h in await store.archive.search(ALICE, "Miso", 10)] == ["cat:1"]


async def test_what_two_forgotten_memories_hide_stays_hidden_until_both_are_restored(
    store: Store, vecs: Vectors
) -> None:
    await _cat_session(store, np.random.default_rng(3))
    first, second = await _memory(store, vecs), await _memory(store, vecs, "Miso sleeps on the keyboard")
    await store.memories.forget(ALICE, first, by=DeletedBy.USER, hide=_hide())
    await store.memories.forget(ALICE, second, by=DeletedBy.AI, hide=_hide()[:1])
    await store.memories.restore(ALICE, first)
    state = await store.sessions.open(ALICE, "cat")
    assert [t.turn for t in state.turn_log] == [2] and len(state.base_truth) == 2  # the turn: still the second's
    await store.memories.restore(ALICE, second)
    assert [t.turn for t in (await store.sessions.open(ALICE, "cat")).turn_log] == [1, 2]


async def test_a_permanent_delete_keeps_them_hidden_and_erasure_removes_the_rows(store: Store, vecs: Vectors) -> None:
    await _cat_session(store, np.random.default_rng(5))
    forgotten, active = await _memory(store, vecs), await _memory(store, vecs, "Miso is afraid of the vacuum")
    await store.memories.forget(ALICE, forgotten, by=DeletedBy.USER, hide=_hide())
    await store.memories.delete(ALICE, forgotten)  # what its forget hid stays hidden
    await store.memories.delete(ALICE, active, hide=_hide()[:1])  # an active memory's items are hidden with it
    with pytest.raises(NotFound):
        await store.memories.restore(ALICE, forgotten)
    assert {i.memory_id for i in await store.hidden.hidden(ALICE)} == {forgotten, active}
    assert [t.turn for t in (await store.sessions.open(ALICE, "cat")).turn_log] == [2]
    exported = [r.data for r in [r async for r in store.users.export(ALICE)] if r.kind == "memory"]
    assert {m["id"]: len(m["hides"]) for m in exported} == {forgotten: 3, active: 1}  # with their history
    report = await store.users.erase(ALICE)
    assert report.removed["hidden_items"] == 4 and await store.hidden.hidden(ALICE) == []


async def test_bad_items_are_refused_and_nothing_is_written(store: Store, vecs: Vectors) -> None:
    await _cat_session(store, np.random.default_rng(6))
    memory_id = await _memory(store, vecs)
    for bad in (
        HiddenItem(HiddenKind.TURN, "cat", 0),
        HiddenItem(HiddenKind.FACT, "cat"),
        HiddenItem(HiddenKind.LINE, "", text="a line"),
        HiddenItem(HiddenKind.FACT, "cat", text="bad\x00text"),
    ):
        with pytest.raises(InputError):
            await store.memories.forget(ALICE, memory_id, by=DeletedBy.USER, hide=[*_hide(), bad])
    assert (await store.memories.get(ALICE, memory_id)).is_active and await store.hidden.hidden(ALICE) == []


async def test_mentions_finds_exchanges_by_stem_by_id_and_by_time(store: Store) -> None:
    await _cat_session(store, np.random.default_rng(8))
    await _fill(store, ALICE, np.random.default_rng(9))
    assert [t.turn_id for t in await store.hidden.mentions(ALICE, ["miso"])] == ["cat:1"]
    assert [t.turn_id for t in await store.hidden.mentions(BOB, ["miso"])] == []
    by_id = await store.hidden.mentions(ALICE, [], turn_ids=["cat:2", "job:xyz", "nope"])
    assert [(t.turn_id, t.user_summary) for t in by_id] == [("cat:2", f"User said: {CAT[1][0]}")]
    at = NOW + timedelta(minutes=1)
    assert [t.turn_id for t in await store.hidden.mentions(ALICE, [], said_at=[at])] == ["cat:1"]
    marathon = await store.hidden.mentions(ALICE, ["marathon"], limit=1)
    assert [t.turn_id for t in marathon] == ["d3:1"]  # the newest holding the stem


async def test_an_index_kept_in_another_process_notices_a_forget_and_a_restore(
    make_store: StoreFactory, vecs: Vectors
) -> None:
    here, there = await make_store(), await make_store()
    rng = np.random.default_rng(10)
    await _cat_session(here, rng)
    index = ArchiveIndex(here, RetrievalSettings())
    query = ArchiveQuery.of("Miso the cat", rng.normal(size=DIM), index.settings, now=NOW)

    def turns(found: list) -> set[str]:  # type: ignore[type-arg]
        return {f"{m.message.session_id}:{m.message.turn}" for m in found}

    assert "cat:1" in turns(await index.search(ALICE, query, 10))
    memory_id = await _memory(there, vecs)
    await there.memories.forget(ALICE, memory_id, by=DeletedBy.USER, hide=_hide())
    assert "cat:1" not in turns(await index.search(ALICE, query, 10))
    await there.memories.restore(ALICE, memory_id)
    assert "cat:1" in turns(await index.search(ALICE, query, 10))
