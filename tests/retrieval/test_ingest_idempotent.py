"""``ingest`` is idempotent (issue 13): messages the session has archived already are not imported again. The same
conversation twice leaves the archive, turn log, vectors, memories and the session's line as after the first; a
longer version appends only its new messages, also when the first import stopped within an exchange; parts imported
again, or the whole after its parts, add nothing. On both backends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memstack import AsyncMemstack
from memstack.types import UserRef

ANA = UserRef("ana")
START = datetime(2024, 6, 14, 18, 0, tzinfo=UTC)
BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]

LINES = [
    ("user", "I'm vegetarian and allergic to peanuts."),
    ("assistant", "Noted: no meat and no peanuts."),
    ("user", "We went to the jazz concert downtown last night."),
    ("assistant", "How was the concert?"),
    ("user", "Loud, but the saxophone solo was wonderful."),
    ("assistant", "Glad you enjoyed it."),
    ("user", "My sister Lupita is visiting in July."),
    ("assistant", "Have a lovely time with Lupita."),
]
TALK = [{"role": r, "content": t, "at": START + timedelta(minutes=i)} for i, (r, t) in enumerate(LINES)]


@pytest.fixture(params=BACKENDS)
async def ms(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    async with AsyncMemstack(home=tmp_path, embedder="hash:64", database_url=url) as engine:
        yield engine


async def _state(ms: AsyncMemstack, session_id: str = "talk") -> dict[str, Any]:
    """Everything an import writes, as plain values."""
    turns = await ms.store.archive.turns(ANA, session_id=session_id, limit=100)
    state = await ms.store.sessions.open(ANA, session_id, create=False)
    (summary,) = await ms.store.archive.sessions(ANA, session_id=session_id)
    return {
        "turns": [(t.turn, t.user, t.assistant, t.at, t.status, t.user_summary, t.assistant_summary) for t in turns],
        "log": state.turn_log,
        "facts": state.base_truth,
        "messages": [(m.id, m.text) for m in await ms.store.archive_vectors.messages(ANA)],
        "memories": sorted((m.id, m.content) for m in await ms.list(ANA, include_deleted=True)),
        "summary": (summary.line, summary.line_turn, summary.turn_count, summary.ended_at),
    }


async def test_the_same_conversation_twice_adds_nothing(ms: AsyncMemstack) -> None:
    first = await ms.ingest(ANA, "talk", TALK)
    assert first.memory_updates and first.summary is not None  # capture found the diet
    before = await _state(ms)
    assert len(before["turns"]) == 4 and len(before["messages"]) == 8
    again = await ms.ingest(ANA, "talk", TALK)
    assert await _state(ms) == before
    assert (again.turns, again.message_ids) == (first.turns, first.message_ids)
    assert again.memory_updates == () and again.summary == first.summary
    # the same messages given as IngestMessage-like mappings with ISO times: the same conversation
    iso = [{**m, "at": m["at"].isoformat()} for m in TALK]  # type: ignore[attr-defined]
    await ms.ingest(ANA, "talk", iso)
    assert await _state(ms) == before


async def test_a_longer_version_appends_only_the_new_messages(ms: AsyncMemstack) -> None:
    await ms.ingest(ANA, "talk", TALK[:4], end=False)  # two whole exchanges
    early = await _state(ms)
    longer = await ms.ingest(ANA, "talk", TALK)
    after = await _state(ms)
    assert after["turns"][:2] == early["turns"][:2]  # untouched
    assert [t[1:3] for t in after["turns"]] == [(LINES[i][1], LINES[i + 1][1]) for i in range(0, 8, 2)]
    assert longer.turns == ("talk:1", "talk:2", "talk:3", "talk:4")
    assert len(after["messages"]) == 8 and after["messages"][:4] == early["messages"]
    assert longer.summary is not None and longer.summary.turn_count == 4


async def test_a_first_import_that_stopped_within_an_exchange(ms: AsyncMemstack) -> None:
    """The first import ends with the user's message: its turn holds it with no reply; the longer version imports
    the rest of that exchange (the reply) as a turn of its own, then the new exchanges. Importing it all again then
    adds nothing."""
    await ms.ingest(ANA, "talk", TALK[:3], end=False)
    done = await ms.ingest(ANA, "talk", TALK)
    turns = (await _state(ms))["turns"]
    assert [t[1:3] for t in turns] == [
        (LINES[0][1], LINES[1][1]),
        (LINES[2][1], ""),  # what the first import archived
        ("", LINES[3][1]),  # the rest of that exchange
        (LINES[4][1], LINES[5][1]),
        (LINES[6][1], LINES[7][1]),
    ]
    assert done.message_ids[2:4] == ("talk:2:user", "talk:3:assistant")
    before = await _state(ms)
    again = await ms.ingest(ANA, "talk", TALK)
    assert await _state(ms) == before and again.message_ids == done.message_ids


async def test_parts_imported_again_add_nothing(ms: AsyncMemstack) -> None:
    await ms.ingest(ANA, "talk", TALK[:4], end=False)
    await ms.ingest(ANA, "talk", TALK[4:])
    before = await _state(ms)
    assert len(before["turns"]) == 4
    await ms.ingest(ANA, "talk", TALK[4:])  # the last part retried
    await ms.ingest(ANA, "talk", TALK[:4], end=False)  # the first part retried
    await ms.ingest(ANA, "talk", TALK)  # the whole conversation
    assert await _state(ms) == before


async def test_a_changed_message_is_new(ms: AsyncMemstack) -> None:
    """Same text at another time, or another text at the same time, is not what was archived: it is imported."""
    await ms.ingest(ANA, "talk", TALK[:2])
    moved = [{**m, "at": m["at"] + timedelta(days=1)} for m in TALK[:2]]  # type: ignore[operator]
    await ms.ingest(ANA, "talk", moved)
    edited = [TALK[0], {**TALK[1], "content": "Noted."}]
    await ms.ingest(ANA, "talk", edited)
    turns = (await _state(ms))["turns"]
    assert [t[2] for t in turns] == [LINES[1][1], LINES[1][1], "Noted."]
