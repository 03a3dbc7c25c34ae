"""``SessionService`` over real stores: the turn's life, the failure table of seed 04 §7 end to end (what is stored,
what is flagged, what the background retry does), late summaries, temporary sessions, consolidation, lines, drain."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from memstack.errors import InputError, MalformedResponse, NotFound, ProviderError, StoreBusy
from memstack.session import OfflineSummarizer, SessionService, SessionSettings, TurnDraft
from memstack.store.base import Store
from memstack.types import ArchivedTurn, BaseTruthDiff, Fact, TurnStatus, UserRef

from .fakes import ScriptedSummarizer, sqlite_only

ALICE = UserRef("alice")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
FAST = SessionSettings(timeout_s=0.2, retry_after_s=0.01)

USER = "Actually my editor is Neovim now, and we deploy with Docker Compose."
REPLY = "Noted: Neovim as your editor, deployments with Docker Compose."
GOOD = TurnDraft(
    "Switched editor to Neovim; deploys with Docker Compose",
    "Noted Neovim and Docker Compose",
    BaseTruthDiff(add=("Deploys with Docker Compose",), update=("Editor: Neovim",)),
)


def service(store: Store, summarizer: object, settings: SessionSettings = FAST) -> SessionService:
    return SessionService(store, summarizer, settings)  # type: ignore[arg-type]


async def turn(svc: SessionService, sid: str, user: str = USER, reply: str = REPLY, **kw: object):  # type: ignore[no-untyped-def]
    handle = await svc.begin_turn(ALICE, sid, **kw)  # type: ignore[arg-type]
    return await svc.finish_turn(handle, user, reply)


async def archived(store: Store, sid: str, n: int):  # type: ignore[no-untyped-def]
    [row] = [t for t in await store.archive.turns(ALICE, session_id=sid) if t.turn == n]
    return row


async def wait_settled(store: Store, sid: str, timeout: float = 5.0) -> None:
    """Until no turn of ``sid`` is flagged (background retries done)."""
    async with asyncio.timeout(timeout):
        while (await store.sessions.open(ALICE, sid, create=False)).flagged_turns:
            await asyncio.sleep(0.01)


# -- the turn ---------------------------------------------------------------------------------------------------


async def test_a_turn_is_stored_whole(store: Store) -> None:
    svc = service(store, ScriptedSummarizer([GOOD]))
    handle = await svc.begin_turn(ALICE, None, agent="coder")
    assert handle.session_id.startswith("ses_") and handle.turn == 1 and handle.new_session
    assert handle.state.base_truth == () and handle.state.agent == "coder"
    code_reply = REPLY + "\n```yaml\nservices:\n  web:\n    image: app\n```"
    result = await svc.finish_turn(handle, USER, code_reply, at=T0)
    assert result.summary.user_summary == GOOD.user_summary and not result.unsummarized
    state = await store.sessions.open(ALICE, handle.session_id)
    assert [f.text for f in state.base_truth] == ["Editor: Neovim", "Deploys with Docker Compose"]
    assert state.turn_log == (result.summary,) and state.turn_count == 1 and state.flagged_turns == ()
    assert [(m.role, m.turn, m.at) for m in state.raw_window] == [("user", 1, T0), ("assistant", 1, T0)]
    row = await archived(store, handle.session_id, 1)
    assert row.status is TurnStatus.SUMMARIZED and row.outcome == "summarized" and row.attempts == 1
    assert "warning: unknown_update (update 'Editor: Neovim'): no fact matches it; added as a new fact" in row.flags
    [artifact] = await store.archive.artifacts(ALICE, handle.session_id, turn=1)
    assert artifact.kind == "code" and "image: app" in artifact.content
    nxt = await svc.begin_turn(ALICE, handle.session_id)
    assert nxt.turn == 2 and not nxt.new_session and nxt.state.turn_log == (result.summary,)
    await svc.abort_turn(nxt)


@sqlite_only
async def test_abort_releases_the_lock_and_reuses_the_turn_number(store: Store) -> None:
    svc = service(store, ScriptedSummarizer([GOOD]))
    first = await svc.begin_turn(ALICE, "s1")
    await svc.abort_turn(first)
    second = await asyncio.wait_for(svc.begin_turn(ALICE, "s1"), 2)
    assert second.turn == 1
    await svc.finish_turn(second, USER, REPLY)
    with pytest.raises(InputError, match="already finished"):
        await svc.finish_turn(second, USER, REPLY)
    assert [t.turn for t in await store.archive.turns(ALICE)] == [1]


async def test_next_turn_waits_for_phase_two_and_times_out_as_store_busy(store: Store) -> None:
    svc = service(store, ScriptedSummarizer([0.3, GOOD]), SessionSettings(lock_timeout_s=0.05, timeout_s=2))
    handle = await svc.begin_turn(ALICE, "s1")
    phase2 = asyncio.create_task(svc.finish_turn(handle, USER, REPLY))
    await asyncio.sleep(0.01)
    with pytest.raises(StoreBusy, match="still busy"):
        await svc.begin_turn(ALICE, "s1")
    await phase2
    nxt = await svc.begin_turn(ALICE, "s1")
    assert nxt.turn == 2 and len(nxt.state.base_truth) == 2  # it saw the finished phase 2
    await svc.abort_turn(nxt)


@sqlite_only
async def test_raw_window_keeps_n_messages_and_long_ones_longer(store: Store) -> None:
    settings = SessionSettings(window=4, long_extra_turns=2, long_words=50)
    svc = service(store, OfflineSummarizer(settings), settings)
    long_reply = "A detailed plan. " * 30  # 90 words: a long message
    await turn(svc, "s1", "Plan my week please", long_reply)
    for i in range(2, 6):
        await turn(svc, "s1", f"Short question {i}?", f"Short answer {i}.")
    handle = await svc.begin_turn(ALICE, "s1")
    window = [(m.role, m.turn) for m in handle.state.raw_window]
    assert window == [("user", 4), ("assistant", 4), ("user", 5), ("assistant", 5)]  # turn 1's reply aged out
    await svc.abort_turn(handle)
    svc2 = service(store, OfflineSummarizer(settings), settings)
    await turn(svc2, "s2", "Plan my week please", long_reply)
    for i in range(2, 5):
        await turn(svc2, "s2", f"Short question {i}?", f"Short answer {i}.")
    handle = await svc2.begin_turn(ALICE, "s2")
    window = [(m.role, m.turn) for m in handle.state.raw_window]
    assert window == [("assistant", 1), ("user", 3), ("assistant", 3), ("user", 4), ("assistant", 4)]
    await svc2.abort_turn(handle)


# -- the failure table ------------------------------------------------------------------------------------------


async def test_malformed_twice_falls_back_then_the_background_retry_applies_the_diff(store: Store) -> None:
    fake = ScriptedSummarizer([MalformedResponse("not JSON"), MalformedResponse("still not"), GOOD])
    svc = service(store, fake)
    result = await turn(svc, "s1")
    assert result.unsummarized and result.summary.user_summary == USER  # the raw text, seed's fallback
    row = await archived(store, "s1", 1)
    assert row.status is TurnStatus.UNSUMMARIZED and row.outcome == "fallback_malformed" and row.attempts == 1
    assert (await store.sessions.open(ALICE, "s1")).base_truth == ()  # the diff was skipped
    await wait_settled(store, "s1")
    state = await store.sessions.open(ALICE, "s1")
    assert [f.text for f in state.base_truth] == ["Editor: Neovim", "Deploys with Docker Compose"]
    assert state.turn_log[0].user_summary == GOOD.user_summary and not state.turn_log[0].unsummarized
    row = await archived(store, "s1", 1)
    assert (row.status, row.attempts) == (TurnStatus.SUMMARIZED, 2) and "retry" not in row.error
    assert len(fake.calls) == 3


@sqlite_only
async def test_malformed_is_final_when_retrying_it_is_off(store: Store) -> None:
    fake = ScriptedSummarizer([MalformedResponse("x"), MalformedResponse("y"), GOOD])
    svc = service(store, fake, SessionSettings(retry_after_s=0.01, retry_malformed=False))
    result = await turn(svc, "s1")
    assert not result.unsummarized
    row = await archived(store, "s1", 1)
    assert row.status is TurnStatus.FALLBACK and not row.flagged and "diff_skipped" in row.flags
    await asyncio.sleep(0.1)
    assert len(fake.calls) == 2 and await store.sessions.pending() == []


@sqlite_only
async def test_timeout_is_flagged_and_summarized_again_in_the_background(store: Store) -> None:
    fake = ScriptedSummarizer([5.0, GOOD])  # the first call outlasts the timeout
    svc = service(store, fake)
    started = asyncio.get_running_loop().time()
    result = await turn(svc, "s1")
    assert asyncio.get_running_loop().time() - started < 2
    assert result.unsummarized and result.outcome.value == "fallback_timeout"
    row = await archived(store, "s1", 1)
    assert row.status is TurnStatus.UNSUMMARIZED and "timed out after 0.2s" in row.error
    assert (await store.sessions.open(ALICE, "s1")).turn_log[0].unsummarized
    await wait_settled(store, "s1")
    row = await archived(store, "s1", 1)
    assert (row.status, row.attempts, row.error) == (TurnStatus.SUMMARIZED, 2, "")


@sqlite_only
async def test_endpoint_error_is_retried_and_retries_are_bounded(store: Store) -> None:
    errors: list[object] = [ProviderError("503 from upstream", status=503) for _ in range(3)]
    fake = ScriptedSummarizer([*errors, GOOD])
    svc = service(store, fake, SessionSettings(retry_after_s=0.01, max_retries=2))
    await turn(svc, "s1")
    await wait_settled(store, "s1")
    row = await archived(store, "s1", 1)
    assert row.status is TurnStatus.FALLBACK and row.attempts == 3 and "503 from upstream" in row.error
    assert "gave up after 3 attempts" in row.flags
    assert len(fake.calls) == 3 and fake.script == [GOOD]  # no fourth call
    assert (await store.sessions.open(ALICE, "s1")).turn_log[0].user_summary == USER  # the raw text stays


@sqlite_only
async def test_hallucinated_and_unknown_entries_are_handled_and_recorded(store: Store, caplog) -> None:  # type: ignore[no-untyped-def]
    draft = TurnDraft(
        "Editor change",
        "Noted",
        BaseTruthDiff(add=("User lives in Oslo", "Deploys with Docker Compose"), remove=("Shell: fish",)),
    )
    svc = service(store, ScriptedSummarizer([draft]))
    with caplog.at_level(logging.WARNING, logger="memstack.session"):
        await turn(svc, "s1")
    state = await store.sessions.open(ALICE, "s1")
    assert [f.text for f in state.base_truth] == ["Deploys with Docker Compose"]
    flags = (await archived(store, "s1", 1)).flags
    assert any(f.startswith("warning: unsupported (add 'User lives in Oslo')") for f in flags)
    assert any(f.startswith("warning: unknown_remove") for f in flags)
    assert "User lives in Oslo" in caplog.text


async def test_a_late_summary_never_overrides_later_turns(store: Store) -> None:
    late = TurnDraft("Python 3.11", "ok", BaseTruthDiff(update=("Python version: 3.11",), add=("Uses pytest",)))
    newer = TurnDraft("Python 3.12", "ok", BaseTruthDiff(update=("Python version: 3.12",)))
    fake = ScriptedSummarizer([5.0, newer, late])  # turn 1 times out; turn 2 summarizes; then turn 1's retry
    svc = service(store, fake, SessionSettings(timeout_s=0.2, retry_after_s=0.3))
    await turn(svc, "s1", "We use Python 3.11 and pytest.", "Great, Python 3.11 with pytest.")
    await turn(svc, "s1", "We moved to Python 3.12.", "Python 3.12 it is.")
    assert [f.text for f in (await store.sessions.open(ALICE, "s1")).base_truth] == ["Python version: 3.12"]
    await wait_settled(store, "s1")
    facts = (await store.sessions.open(ALICE, "s1")).base_truth
    assert [(f.text, f.since_turn) for f in facts] == [("Uses pytest", 1), ("Python version: 3.12", 2)]
    row = await archived(store, "s1", 1)
    assert "late" in row.flags and any(f.startswith("warning: superseded") for f in row.flags)
    assert fake.calls[-1].base_truth == ()  # the retry saw base truth as of turn 1


# -- temporary sessions -----------------------------------------------------------------------------------------


async def test_temporary_sessions_remember_in_memory_and_store_nothing(store: Store) -> None:
    svc = service(store, OfflineSummarizer())
    first = await svc.begin_turn(ALICE, None, temporary=True)
    assert first.temporary and first.session_id.startswith("tmp_")
    await svc.finish_turn(first, "My name is Dana. Never use semicolons.", "Hi Dana, no semicolons.")
    second = await svc.begin_turn(ALICE, first.session_id, temporary=True)
    assert second.turn == 2 and len(second.state.turn_log) == 1 and second.state.base_truth
    assert [m.turn for m in second.state.raw_window] == [1, 1]
    await svc.finish_turn(second, "What is my name?", "Dana.")
    assert await store.archive.sessions(ALICE) == [] and await store.archive.turns(ALICE) == []
    assert await store.sessions.pending() == []
    with pytest.raises(NotFound):
        await store.sessions.open(ALICE, first.session_id, create=False)
    assert await svc.end_session(ALICE, first.session_id) is None
    again = await svc.begin_turn(ALICE, first.session_id, temporary=True)
    assert again.turn == 1  # ended: forgotten
    await svc.abort_turn(again)


@sqlite_only
async def test_temporary_sessions_are_bounded(store: Store) -> None:
    svc = service(store, OfflineSummarizer(), SessionSettings(temporary_sessions=2))
    ids = []
    for _ in range(3):
        h = await svc.begin_turn(ALICE, None, temporary=True)
        await svc.finish_turn(h, "hello", "hi")
        ids.append(h.session_id)
    oldest = await svc.begin_turn(ALICE, ids[0], temporary=True)
    assert oldest.turn == 1  # evicted, least recently used
    await svc.abort_turn(oldest)


# -- consolidation, snapshots, hard exceptions --------------------------------------------------------------------


@sqlite_only
async def test_consolidation_cadence_snapshots_and_hard_exceptions(store: Store) -> None:
    settings = SessionSettings(consolidate_every=4, snapshot_every=3, retry_after_s=0.01)
    drops_rules = ScriptedSummarizer([], consolidated=[Fact("Name: Dana")])  # a model that drops the rule
    drafts = [
        TurnDraft("rule", "ok", BaseTruthDiff(add=("Never use semicolons",))),
        TurnDraft("name", "ok", BaseTruthDiff(add=("Name: Dana",))),
        *[TurnDraft(f"t{i}", "ok") for i in range(3, 10)],
    ]
    drops_rules.script = list(drafts)
    svc = service(store, drops_rules, settings)
    await turn(svc, "s1", "Never use semicolons.", "Understood.")
    await turn(svc, "s1", "My name is Dana.", "Hi Dana.")
    for i in range(3, 10):
        await turn(svc, "s1", f"Question {i}?", f"Answer {i}.")
    state = await store.sessions.open(ALICE, "s1")
    assert state.last_consolidated_turn == 8
    assert [(f.text, f.hard_exception) for f in state.base_truth] == [
        ("Never use semicolons", True),
        ("Name: Dana", False),
    ]
    snaps = await store.archive.snapshots(ALICE, "s1")
    assert [(s.turn, s.reason) for s in snaps] == [
        (3, "periodic"),
        (4, "before consolidation"),
        (4, "consolidated by scripted:test"),
        (6, "periodic"),
        (8, "before consolidation"),
        (8, "consolidated by scripted:test"),
        (9, "periodic"),
    ]
    assert all(any(f.hard_exception for f in s.facts) for s in snaps)
    flags = (await archived(store, "s1", 4)).flags
    assert "consolidated" in flags and any("hard exception(s); restored" in f for f in flags)


@sqlite_only
async def test_hard_exceptions_survive_consolidation_of_a_large_base_truth(store: Store) -> None:
    settings = SessionSettings(max_facts=4, consolidate_every=100)
    svc = service(store, OfflineSummarizer(settings), settings)
    await turn(svc, "s1", "Never deploy on Fridays. Always answer in English.", "Understood, both rules noted.")
    rules = [(f.text, f.hard_exception) for f in (await store.sessions.open(ALICE, "s1")).base_truth]
    assert len(rules) == 2 and all(hard for _, hard in rules)
    for i in range(2, 12):
        await turn(svc, "s1", f"My setting{i} is value{i}.", f"Noted setting{i}.")
    state = await store.sessions.open(ALICE, "s1")
    assert state.last_consolidated_turn == 11  # over max_facts: consolidated every turn
    assert [(f.text, f.hard_exception) for f in state.base_truth if f.hard_exception] == rules
    assert {f.text for f in state.base_truth if not f.hard_exception} == {f"Setting{i}: value{i}" for i in range(2, 12)}


# -- cross-session lines ------------------------------------------------------------------------------------------


@sqlite_only
async def test_end_session_writes_the_line_and_new_sessions_refresh_stale_ones(store: Store) -> None:
    fake = ScriptedSummarizer([GOOD, GOOD, GOOD], line="Alice switched to Neovim and Docker Compose")
    svc = service(store, fake)
    await turn(svc, "first")
    summary = await svc.end_session(ALICE, "first")
    assert summary is not None and summary.line == "Alice switched to Neovim and Docker Compose"
    assert summary.ended_at is not None and summary.line_turn == 1
    await turn(svc, "second")  # never ended: its line is written when the next session starts
    fake.line = "Alice set up deployment"
    await turn(svc, "third")
    await svc.drain(5)
    lines = {s.session_id: s.line for s in await svc.recent_summaries(ALICE, 5)}
    assert lines == {"first": "Alice switched to Neovim and Docker Compose", "second": "Alice set up deployment"}
    assert [s.session_id for s in await svc.recent_summaries(ALICE, 5, exclude="second")] == ["first"]
    assert await svc.end_session(ALICE, await _empty_session(svc)) is None
    with pytest.raises(NotFound):
        await svc.end_session(ALICE, "never-existed")


async def _empty_session(svc: SessionService) -> str:
    handle = await svc.begin_turn(ALICE, None)
    await svc.abort_turn(handle)
    return handle.session_id


# -- shutdown and restart ---------------------------------------------------------------------------------------


async def test_drain_waits_for_phase_two_and_leaves_retries_flagged_for_the_next_start(make_store) -> None:  # type: ignore[no-untyped-def]
    store = await make_store()
    fake = ScriptedSummarizer([5.0, 0.2, GOOD])
    svc = service(store, fake, SessionSettings(timeout_s=0.1, retry_after_s=60))
    await turn(svc, "s1")  # times out: a retry is scheduled a minute from now
    handle = await svc.begin_turn(ALICE, "s1")
    phase2 = asyncio.create_task(svc.finish_turn(handle, "Second message", "Second reply"))
    await asyncio.sleep(0.01)
    assert svc.busy >= 2
    await svc.drain(5)  # phase 2 of turn 2 finishes; the sleeping retry is cancelled
    assert phase2.done() and svc.busy == 0
    assert [t.turn_id for t in await store.sessions.pending()] == ["s1:1", "s1:2"]  # turn 2 timed out as well
    restarted = service(store, ScriptedSummarizer([GOOD, GOOD]), SessionSettings(retry_after_s=60))
    assert await restarted.resume_pending() == 2
    assert await store.sessions.pending() == [] and await restarted.resume_pending() == 0
    assert [t.attempts for t in await store.archive.turns(ALICE)] == [2, 2]


async def test_resume_in_two_processes_summarizes_each_turn_once(make_store, backend: str) -> None:  # type: ignore[no-untyped-def]
    """Two processes (two stores) start at once over the same crashed turns: each turn is committed once. On
    PostgreSQL the advisory lock serialises them (no work is done twice); on SQLite, which serves one process, the
    version check refuses the slower commit."""
    first, second = await make_store(), await make_store()
    for sid in ("a", "b"):
        await first.sessions.open(ALICE, sid)
        for n in (1, 2):
            await first.sessions.record(ALICE, ArchivedTurn(sid, n, USER, REPLY, T0 + timedelta(seconds=n)))
    fakes = [ScriptedSummarizer([GOOD] * 4), ScriptedSummarizer([GOOD] * 4)]
    counts = await asyncio.gather(service(first, fakes[0]).resume_pending(), service(second, fakes[1]).resume_pending())
    assert sum(counts) == 4
    if backend == "postgres":
        assert len(fakes[0].calls) + len(fakes[1].calls) == 4
    for sid in ("a", "b"):
        state = await first.sessions.open(ALICE, sid)
        assert [t.turn for t in state.turn_log] == [1, 2] and state.flagged_turns == ()
        assert [f.text for f in state.base_truth] == ["Editor: Neovim", "Deploys with Docker Compose"]
        assert [t.attempts for t in await first.archive.turns(ALICE, session_id=sid)] == [1, 1]


@sqlite_only
async def test_hard_exceptions_from_the_store_survive_context_trimming(store: Store) -> None:
    """What phase 1 reads back (``handle.state``) goes to the context assembler: under a budget too small for the
    session's memory, the turn log and the ordinary facts are trimmed and the hard exceptions stay."""
    from memstack.context import ContextRequest, assemble
    from memstack.types import FragmentStatus, Layer

    settings = SessionSettings(consolidate_every=100, max_facts=100)
    svc = service(store, OfflineSummarizer(settings), settings)
    await turn(svc, "s1", "Never deploy on Fridays. Always answer in English.", "Understood, both rules noted.")
    for i in range(2, 26):
        await turn(svc, "s1", f"My setting{i} is value{i}.", f"Noted setting{i}.")
    handle = await svc.begin_turn(ALICE, "s1")
    state = handle.state
    await svc.abort_turn(handle)
    rules = [f for f in state.base_truth if f.hard_exception]
    assert len(rules) == 2 and len(state.base_truth) == 26

    def request(budget: int | None, facts: tuple[Fact, ...] = state.base_truth) -> ContextRequest:
        return ContextRequest(
            "What next?", facts=facts, turn_log=state.turn_log, thread=state.raw_window, budget_tokens=budget
        )

    floor = assemble(ContextRequest("What next?", facts=tuple(rules), thread=state.raw_window)).tokens
    ctx = assemble(request(floor + 10))
    facts = [f for f in ctx.fragments if f.layer is Layer.FACTS]
    kept = {f.text for f in facts if f.status is FragmentStatus.KEPT}
    assert {f.text for f in rules} <= kept  # every hard exception, verbatim
    assert sum(f.status is FragmentStatus.TRIMMED for f in facts) >= 12  # at least half the ordinary facts went
    assert all(f.status is FragmentStatus.TRIMMED for f in ctx.fragments if f.layer is Layer.TURN_LOG)
