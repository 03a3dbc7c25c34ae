"""The session storage contract (``store.sessions``, ``store.archive``): every backend in ``conftest.BACKENDS``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from memstack.errors import InputError, NotFound, SessionConflict, StoreBusy
from memstack.store.base import SessionArchive, SessionStore, Store
from memstack.types import (
    ArchivedTurn,
    Artifact,
    BaseTruthSnapshot,
    Fact,
    RawMessage,
    TurnCommit,
    TurnStatus,
    TurnSummary,
    UserRef,
)

ALICE = UserRef("alice")
BOB = UserRef("bob")
ALICE_ELSEWHERE = UserRef("alice", tenant="other-tenant")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def _turn(sid: str, n: int, user: str = "", assistant: str = "", **kw: object) -> ArchivedTurn:
    at = kw.pop("at", T0 + timedelta(minutes=n))
    return ArchivedTurn(sid, n, user or f"user message {n}", assistant or f"reply {n}", at, **kw)  # type: ignore[arg-type]


def _commit(n: int, facts: tuple[Fact, ...], version: int, **kw: object) -> TurnCommit:
    summary = TurnSummary(n, f"asked {n}", f"answered {n}", unsummarized=kw.get("status") is TurnStatus.UNSUMMARIZED)
    return TurnCommit(n, kw.pop("status", TurnStatus.SUMMARIZED), summary, facts, version, **kw)  # type: ignore[arg-type]


async def _play(store: Store, user: UserRef, sid: str, n: int, **kw: object) -> None:
    """Record and commit turns 1..n, one new fact each."""
    for i in range(1, n + 1):
        state = await store.sessions.open(user, sid)
        await store.sessions.record(user, _turn(sid, i, **kw))
        facts = (*state.base_truth, Fact(f"fact {i}", since_turn=i))
        await store.sessions.commit(user, sid, _commit(i, facts, state.version))


async def test_store_exposes_the_session_roles(store: Store) -> None:
    assert isinstance(store.sessions, SessionStore)
    assert isinstance(store.archive, SessionArchive)


# -- open ---------------------------------------------------------------------------------------------------------


async def test_open_creates_once_and_reads_back(store: Store) -> None:
    created = await store.sessions.open(ALICE, "s1", agent="tutor", now=T0)
    assert (created.session_id, created.user_id, created.tenant, created.agent) == ("s1", "alice", "default", "tutor")
    assert created.turn_count == 0 and created.version == 0 and created.base_truth == () and created.turn_log == ()
    assert created.created_at == T0 and created.ended_at is None
    again = await store.sessions.open(ALICE, "s1", create=False)
    assert again == created
    assert (await store.sessions.open(ALICE, "s1")).agent == "tutor"  # no agent given: the stored one


async def test_open_without_create_raises_not_found(store: Store) -> None:
    with pytest.raises(NotFound, match="memstack sessions list"):
        await store.sessions.open(ALICE, "nope", create=False)


async def test_a_session_belongs_to_one_agent(store: Store) -> None:
    await store.sessions.open(ALICE, "s1", agent="tutor")
    with pytest.raises(InputError, match="belongs to agent 'tutor'"):
        await store.sessions.open(ALICE, "s1", agent="coder")
    await store.sessions.open(ALICE, "s2")
    assert (await store.sessions.open(ALICE, "s2", agent="coder")).agent == "coder"  # learned on first use


async def test_bad_session_ids_are_refused(store: Store) -> None:
    for bad in ("", "x" * 201, "tab\there"):
        with pytest.raises(InputError, match="session_id"):
            await store.sessions.open(ALICE, bad)


async def test_sessions_are_scoped_by_tenant_and_user(store: Store) -> None:
    await _play(store, ALICE, "shared-id", 2)
    bob = await store.sessions.open(BOB, "shared-id")  # the same id is another session for another user
    assert bob.turn_count == 0 and bob.base_truth == ()
    with pytest.raises(NotFound):
        await store.sessions.open(ALICE_ELSEWHERE, "shared-id", create=False)
    assert await store.archive.turns(BOB) == []
    assert await store.archive.search(BOB, "message", 5) == []
    assert await store.archive.search(ALICE_ELSEWHERE, "message", 5) == []
    assert await store.archive.sessions(ALICE_ELSEWHERE) == []
    assert len(await store.archive.turns(ALICE)) == 2


# -- record and commit ----------------------------------------------------------------------------------------------


async def test_record_archives_the_exchange_flagged_pending(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    await store.sessions.record(ALICE, _turn("s1", 1, "Hi, I'm Dana", "Hello Dana", route="short", keep_extra=(0, 2)))
    state = await store.sessions.open(ALICE, "s1", create=False)
    assert state.turn_count == 1 and state.flagged_turns == (1,)
    assert state.turn_log == ()  # no summary yet
    at = T0 + timedelta(minutes=1)
    assert state.raw_window == (
        RawMessage("user", "Hi, I'm Dana", 1, at, 0),
        RawMessage("assistant", "Hello Dana", 1, at, 2),
    )
    [archived] = await store.archive.turns(ALICE, session_id="s1")
    assert archived.status is TurnStatus.PENDING and archived.flagged and archived.turn_id == "s1:1"
    assert (archived.route, archived.keep_extra, archived.user_id, archived.tenant) == (
        "short",
        (0, 2),
        "alice",
        "default",
    )


async def test_turn_numbers_are_contiguous_and_taken_once(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    with pytest.raises(SessionConflict, match="another process"):
        await store.sessions.record(ALICE, _turn("s1", 2))  # a gap
    await store.sessions.record(ALICE, _turn("s1", 1))
    with pytest.raises(SessionConflict):
        await store.sessions.record(ALICE, _turn("s1", 1, "something else"))  # taken
    with pytest.raises(NotFound):
        await store.sessions.record(ALICE, _turn("unknown", 1))
    with pytest.raises(InputError):
        await store.sessions.record(ALICE, _turn("s1", 0))
    assert (await store.sessions.open(ALICE, "s1")).turn_count == 1


async def test_commit_writes_summary_base_truth_and_bumps_the_version(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    await store.sessions.record(ALICE, _turn("s1", 1))
    facts = (Fact("Never use semicolons", True, 1), Fact("Name: Dana", False, 1))
    await store.sessions.commit(
        ALICE, "s1", _commit(1, facts, 0, outcome="summarized", attempts=1, flags=("offline", "warning: x"))
    )
    state = await store.sessions.open(ALICE, "s1")
    assert state.base_truth == facts and state.version == 1 and state.flagged_turns == ()
    assert state.turn_log == (TurnSummary(1, "asked 1", "answered 1"),)
    [archived] = await store.archive.turns(ALICE, session_id="s1")
    assert archived.status is TurnStatus.SUMMARIZED and not archived.flagged
    assert (archived.user_summary, archived.assistant_summary) == ("asked 1", "answered 1")
    assert (archived.outcome, archived.attempts, archived.flags) == ("summarized", 1, ("offline", "warning: x"))


async def test_commit_on_a_stale_version_is_refused_and_changes_nothing(store: Store) -> None:
    await _play(store, ALICE, "s1", 1)
    await store.sessions.record(ALICE, _turn("s1", 2))
    with pytest.raises(SessionConflict, match="changed while turn 2"):
        await store.sessions.commit(ALICE, "s1", _commit(2, (Fact("lost"),), 0))
    state = await store.sessions.open(ALICE, "s1")
    assert [f.text for f in state.base_truth] == ["fact 1"] and state.flagged_turns == (2,) and state.version == 1


async def test_unsummarized_turn_is_in_the_log_flagged_and_stays_pending(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    await store.sessions.record(ALICE, _turn("s1", 1))
    await store.sessions.commit(
        ALICE, "s1", _commit(1, (), 0, status=TurnStatus.UNSUMMARIZED, outcome="fallback_timeout", error="timed out")
    )
    state = await store.sessions.open(ALICE, "s1")
    assert state.turn_log == (TurnSummary(1, "asked 1", "answered 1", unsummarized=True),)
    assert state.flagged_turns == (1,)
    [pending] = await store.sessions.pending()
    assert (pending.turn_id, pending.status, pending.error) == ("s1:1", TurnStatus.UNSUMMARIZED, "timed out")
    await store.sessions.commit(ALICE, "s1", _commit(1, (Fact("f", since_turn=1),), 1, attempts=2))  # the retry
    assert await store.sessions.pending() == []
    assert (await store.sessions.open(ALICE, "s1")).turn_log[0].unsummarized is False


async def test_commit_of_an_unrecorded_turn_is_not_found(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    with pytest.raises(NotFound):
        await store.sessions.commit(ALICE, "s1", _commit(1, (), 0))
    assert (await store.sessions.open(ALICE, "s1")).version == 0


async def test_pending_lists_every_users_flagged_turns_oldest_first(store: Store) -> None:
    await store.sessions.open(ALICE, "a")
    await store.sessions.open(BOB, "b")
    await store.sessions.record(BOB, _turn("b", 1, at=T0))
    await store.sessions.record(ALICE, _turn("a", 1, at=T0 + timedelta(seconds=1)))
    await store.sessions.record(ALICE, _turn("a", 2, at=T0 + timedelta(seconds=2)))
    await store.sessions.commit(ALICE, "a", _commit(1, (), 0))
    pending = await store.sessions.pending()
    assert [(p.user_id, p.turn_id) for p in pending] == [("bob", "b:1"), ("alice", "a:2")]
    assert pending[1].exchange.user == "user message 2"
    assert len(await store.sessions.pending(limit=1)) == 1


async def test_artifacts_are_keyed_by_turn_and_replaced_on_a_second_commit(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    for n in (1, 2):
        await store.sessions.record(ALICE, _turn("s1", n))
    code = Artifact(1, "code", "def add(a, b):\n    return a + b", language="python", label="add")
    draft = Artifact(1, "draft", "Dear team, ...", label="Dear team")
    await store.sessions.commit(ALICE, "s1", _commit(1, (), 0, artifacts=(code, draft)))
    later = Artifact(2, "code", "def add(a: int, b: int) -> int:\n    return a + b", language="python", label="add")
    await store.sessions.commit(ALICE, "s1", _commit(2, (), 1, artifacts=(later,)))
    turn1 = await store.archive.artifacts(ALICE, "s1", turn=1)
    assert [(a.turn, a.kind, a.index, a.content, a.language, a.label, a.session_id) for a in turn1] == [
        (1, "code", 0, code.content, "python", "add", "s1"),
        (1, "draft", 1, draft.content, "", "Dear team", "s1"),
    ]
    assert all(a.created_at is not None for a in turn1)
    assert [a.turn for a in await store.archive.artifacts(ALICE, "s1")] == [1, 1, 2]
    await store.sessions.commit(ALICE, "s1", _commit(1, (), 2, artifacts=(code,)))  # a retry of turn 1
    assert len(await store.archive.artifacts(ALICE, "s1", turn=1)) == 1
    assert await store.archive.artifacts(BOB, "s1") == []


async def test_snapshots_and_consolidation_mark(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    for n in range(1, 5):
        await store.sessions.record(ALICE, _turn("s1", n))
    facts = (Fact("a", True, 1), Fact("b", False, 2))
    snaps = (BaseTruthSnapshot(2, "before consolidation", facts), BaseTruthSnapshot(2, "consolidated", facts[:1]))
    await store.sessions.commit(ALICE, "s1", _commit(2, facts[:1], 0, snapshots=snaps, consolidated=True))
    await store.sessions.commit(ALICE, "s1", _commit(1, facts[:1], 1, consolidated=True))  # late: the mark stays 2
    assert (await store.sessions.open(ALICE, "s1")).last_consolidated_turn == 2
    await store.sessions.commit(
        ALICE, "s1", _commit(4, facts[:1], 2, snapshots=(BaseTruthSnapshot(4, "periodic", ()),))
    )
    got = await store.archive.snapshots(ALICE, "s1")
    assert [(s.turn, s.reason, s.facts) for s in got] == [
        (2, "before consolidation", facts),
        (2, "consolidated", facts[:1]),
        (4, "periodic", ()),
    ]
    assert all(s.session_id == "s1" and s.at is not None for s in got)
    assert [s.reason for s in await store.archive.snapshots(ALICE, "s1", limit=2)] == ["consolidated", "periodic"]
    assert await store.archive.snapshots(BOB, "s1") == []


async def test_raw_window_is_the_tail_of_the_archive(store: Store) -> None:
    await _play(store, ALICE, "s1", 6)
    state = await store.sessions.open(ALICE, "s1", window_turns=2)
    assert [(m.role, m.turn) for m in state.raw_window] == [
        ("user", 5),
        ("assistant", 5),
        ("user", 6),
        ("assistant", 6),
    ]
    assert [t.turn for t in state.turn_log] == [1, 2, 3, 4, 5, 6]


# -- end, listing, archive -------------------------------------------------------------------------------------------


async def test_end_writes_the_line_and_a_new_turn_resumes(store: Store) -> None:
    await _play(store, ALICE, "s1", 2)
    summary = await store.sessions.end(ALICE, "s1", "Dana set up her Rust project", through_turn=2, ended=True, now=T0)
    assert (summary.session_id, summary.line, summary.line_turn, summary.turn_count) == (
        "s1",
        "Dana set up her Rust project",
        2,
        2,
    )
    assert summary.ended_at == T0
    assert (await store.sessions.open(ALICE, "s1", create=False)).ended_at == T0  # reading does not resume
    assert (await store.sessions.open(ALICE, "s1")).ended_at is None  # a new turn does
    refreshed = await store.sessions.end(ALICE, "s1", "newer line", through_turn=2, ended=False)
    assert refreshed.ended_at is None and refreshed.line == "newer line"
    with pytest.raises(NotFound):
        await store.sessions.end(BOB, "s1", "x", through_turn=0, ended=True)


async def test_sessions_listing_newest_activity_first(store: Store) -> None:
    for sid in ("old", "mid", "new"):
        await store.sessions.open(ALICE, sid)
        await asyncio.sleep(0.002)
    await store.sessions.record(ALICE, _turn("old", 1, at=datetime.now(UTC) + timedelta(seconds=5)))  # active again
    listed = await store.archive.sessions(ALICE)
    assert [s.session_id for s in listed] == ["old", "new", "mid"]
    assert listed[0].flagged == 1 and listed[0].turn_count == 1 and listed[1].flagged == 0
    assert [s.session_id for s in await store.archive.sessions(ALICE, limit=1, offset=1)] == ["new"]
    await store.sessions.end(ALICE, "mid", "a line", through_turn=0, ended=True)
    assert [s.session_id for s in await store.archive.sessions(ALICE, with_line=True)] == ["mid"]
    (mid,) = await store.archive.sessions(ALICE, session_id="mid")  # one session by id
    assert mid.line == "a line" and mid.ended_at is not None
    assert await store.archive.sessions(ALICE, session_id="mid", with_line=True) == [mid]
    assert await store.archive.sessions(ALICE, session_id="new", with_line=True) == []
    assert await store.archive.sessions(BOB, session_id="mid") == []
    assert await store.archive.sessions(ALICE, session_id="unknown") == []
    with pytest.raises(InputError):
        await store.archive.sessions(ALICE, limit=0)


async def test_turns_listing_for_index_builds(store: Store) -> None:
    await _play(store, ALICE, "s1", 3)
    await store.sessions.open(ALICE, "s2")
    await store.sessions.record(ALICE, _turn("s2", 1, at=T0 + timedelta(seconds=90)))  # between s1's turns 1 and 2
    all_turns = await store.archive.turns(ALICE)
    assert [t.turn_id for t in all_turns] == ["s1:1", "s2:1", "s1:2", "s1:3"]
    since = await store.archive.turns(ALICE, since=T0 + timedelta(minutes=2))
    assert [t.turn_id for t in since] == ["s1:2", "s1:3"]
    page = await store.archive.turns(ALICE, limit=2, offset=1)
    assert [t.turn_id for t in page] == ["s2:1", "s1:2"]
    assert [t.turn for t in await store.archive.turns(ALICE, session_id="s1")] == [1, 2, 3]
    assert await store.archive.turns(ALICE, session_id="missing") == []


async def test_search_finds_past_exchanges_best_first(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    texts = [
        ("My cat Miso hates the vacuum cleaner", "Cats often fear loud noises."),
        ("What should I cook tonight?", "Try a mushroom risotto."),
        ("Miso soup recipe please", "Dashi, miso paste, tofu, and miso again: miso miso."),
    ]
    for n, (u, a) in enumerate(texts, start=1):
        await store.sessions.record(ALICE, _turn("s1", n, u, a))
    hits = await store.archive.search(ALICE, "miso", 5)
    assert [h.turn_id for h in hits] == ["s1:3", "s1:1"]
    assert hits[0].score >= hits[1].score and hits[0].session_id == "s1" and hits[0].turn == 3
    assert "Assistant: Dashi" in hits[0].text and hits[0].at == T0 + timedelta(minutes=3)
    assert [h.turn_id for h in await store.archive.search(ALICE, "risotto", 5)] == ["s1:2"]  # the reply counts
    assert [h.turn_id for h in await store.archive.search(ALICE, "miso", 1)] == ["s1:3"]
    assert await store.archive.search(ALICE, "miso", 5, session_id="other") == []


async def test_search_takes_user_text_literally(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    await store.sessions.record(ALICE, _turn("s1", 1, "Miso the cat", "Hi Miso"))
    await store.sessions.open(BOB, "s1")
    await store.sessions.record(BOB, _turn("s1", 1, "Bob's cat is also Miso", "Hi"))
    for query in ('miso" OR "x', "NEAR(miso cat)", "miso*", "fts_owner : x", "(", "-miso", "'", "miso & !cat", ":*"):
        hits = await store.archive.search(ALICE, query, 5)  # never a syntax error, never another user's rows
        assert all(h.user == "Miso the cat" for h in hits), query


async def test_search_without_words_and_bad_k(store: Store) -> None:
    await _play(store, ALICE, "s1", 1)
    assert await store.archive.search(ALICE, "?!", 5) == []
    with pytest.raises(InputError):
        await store.archive.search(ALICE, "message", 0)


async def test_long_and_unicode_messages_round_trip(store: Store) -> None:
    await store.sessions.open(ALICE, "s1")
    long_text = "Ünïcödé ✓ 日本語 " + "word " * 5000
    await store.sessions.record(ALICE, _turn("s1", 1, long_text, "emoji 🎉 reply"))
    [t] = await store.archive.turns(ALICE)
    assert t.user == long_text and t.assistant == "emoji 🎉 reply"
    assert [h.turn_id for h in await store.archive.search(ALICE, "日本語", 5)] == ["s1:1"]


async def test_state_survives_reopening_the_store(make_store) -> None:  # type: ignore[no-untyped-def]
    first = await make_store()
    await _play(first, ALICE, "s1", 3)
    before = await first.sessions.open(ALICE, "s1")
    await first.close()
    second = await make_store()
    assert await second.sessions.open(ALICE, "s1", create=False) == before


# -- the lock --------------------------------------------------------------------------------------------------------


async def test_lock_serialises_one_session_and_times_out(store: Store) -> None:
    held = await store.sessions.acquire(ALICE, "s1")
    assert held.session_id == "s1"
    other = await asyncio.wait_for(store.sessions.acquire(ALICE, "s2"), 5)  # another session is free
    bobs = await asyncio.wait_for(store.sessions.acquire(BOB, "s1"), 5)  # so is another user's with the same id
    with pytest.raises(StoreBusy):
        await store.sessions.acquire(ALICE, "s1", timeout=0.1)
    order: list[str] = []

    async def waiter() -> None:
        h = await store.sessions.acquire(ALICE, "s1", timeout=5)
        order.append("waiter")
        await h.release()

    task = asyncio.create_task(waiter())
    await asyncio.sleep(0.1)
    order.append("holder releases")
    await held.release()
    await held.release()  # idempotent
    await asyncio.wait_for(task, 5)
    assert order == ["holder releases", "waiter"]
    await other.release()
    await bobs.release()


async def test_a_cancelled_waiter_leaves_the_lock_free(store: Store) -> None:
    held = await store.sessions.acquire(ALICE, "s1")
    waiter = asyncio.create_task(store.sessions.acquire(ALICE, "s1"))
    await asyncio.sleep(0.2)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await held.release()
    again = await asyncio.wait_for(store.sessions.acquire(ALICE, "s1", timeout=2), 5)
    await again.release()


async def test_two_stores_on_one_database_share_the_lock(make_store) -> None:  # type: ignore[no-untyped-def]
    """Two stores on one database are two processes to each other (on both backends: the lease is in the data)."""
    first, second = await make_store(), await make_store()
    held = await first.sessions.acquire(ALICE, "s1")
    with pytest.raises(StoreBusy, match="another process"):
        await second.sessions.acquire(ALICE, "s1", timeout=0.3)
    other = await asyncio.wait_for(second.sessions.acquire(ALICE, "s2", timeout=2), 5)
    waiting = asyncio.create_task(second.sessions.acquire(ALICE, "s1", timeout=5))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await held.release()
    await (await asyncio.wait_for(waiting, 5)).release()
    await other.release()
