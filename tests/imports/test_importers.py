"""What users leave behind elsewhere, imported (issue 27): mem0's ``get_all`` JSON becomes memories with mem0's ids,
texts and times; plain JSONL messages go through ``ingest`` (archived at their own times, memory capture run on them).
Both are idempotent, and a file that cannot be read whole is refused before anything is written. The files are
``data/`` (written for these tests)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import ImportConflict, ImportRefused
from memstack.types import UserRef

DATA = Path(__file__).parent / "data"
ANA, BEN = UserRef("ana", tenant="default"), UserRef("ben", tenant="default")


@pytest.fixture
async def ms(tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(Config(home=tmp_path)) as engine:
        yield engine


async def test_mem0_memories_keep_their_ids_texts_and_times(ms: AsyncMemstack) -> None:
    data = json.loads((DATA / "mem0-get-all.json").read_text())
    reports = await ms.users.import_mem0(data)
    assert {(r.user_id, r.added["memories"]) for r in reports} == {("ana", 2), ("ben", 1)}

    (vegetarian, cello) = sorted(await ms.list(ANA), key=lambda m: m.created_at)
    assert vegetarian.id == "3c90c3cc-0d44-4b50-8888-8dd25736052a"
    assert vegetarian.content == "Is a vegetarian and allergic to peanuts"
    assert vegetarian.created_at == datetime(2024, 3, 2, 17, 15, tzinfo=UTC)
    assert vegetarian.updated_at == datetime(2024, 5, 21, 1, 40, 12, tzinfo=UTC)
    assert vegetarian.metadata["source"] == "onboarding"
    assert vegetarian.metadata["mem0"]["categories"] == ["food", "health"]
    assert cello.agent_id == "tutor" and cello.updated_at == cello.created_at  # mem0 had no update time
    (history,) = await ms.history(ANA, vegetarian.id)
    assert history.at == vegetarian.created_at
    (nurse,) = await ms.list(BEN)
    assert nurse.created_at == datetime(2023, 11, 30, 2, 0, tzinfo=UTC)  # no time zone: UTC
    assert [h.memory.id for h in await ms.search(ANA, "what can't I eat?", limit=1)] == [vegetarian.id]

    # again: nothing added, what is there unchanged
    before = await ms.export(ANA)
    again = await ms.users.import_mem0(data)
    assert all(r.total == 0 and r.unchanged and r.skipped for r in again)
    assert {**await ms.export(ANA), "exported_at": before["exported_at"]} == before


async def test_a_mem0_file_that_cannot_be_read_whole_changes_nothing(ms: AsyncMemstack) -> None:
    data = json.loads((DATA / "mem0-get-all.json").read_text())
    broken = json.loads(json.dumps(data))
    broken["results"][2]["created_at"] = "yesterday"
    with pytest.raises(ImportRefused, match="memory 3's created_at"):
        await ms.users.import_mem0(broken)
    with pytest.raises(ImportRefused, match="get_all"):
        await ms.users.import_mem0({"memories": "not a list"})
    nameless = {"results": [{k: v for k, v in data["results"][0].items() if k != "user_id"}]}
    with pytest.raises(ImportRefused, match="no user_id"):
        await ms.users.import_mem0(nameless)
    assert await ms.list(ANA, include_deleted=True) == [] and await ms.list(BEN, include_deleted=True) == []
    (report,) = await ms.users.import_mem0(nameless, user_id="cara")
    assert report.user_id == "cara" and report.added["memories"] == 1
    # another tenant's memory ids are not taken over
    with pytest.raises(ImportConflict, match="another user"):
        await ms.users.import_mem0(nameless, user_id="cara", tenant="globex")
    assert await ms.list(UserRef("cara", tenant="globex"), include_deleted=True) == []


async def test_jsonl_messages_are_captured_at_their_own_times(ms: AsyncMemstack) -> None:
    path = DATA / "messages.jsonl"
    reports = {r.user_id: r for r in await ms.users.import_messages(path)}
    assert reports["ana"].added["messages"] == 3 and reports["ben"].added["messages"] == 1
    sessions = {s.session_id: s for s in await ms.store.archive.sessions(ANA)}
    assert set(sessions) == {"import-2024-02-03", "family"}
    turns = await ms.store.archive.turns(ANA, session_id="import-2024-02-03")  # each message at its own time
    assert [(t.at, t.user) for t in turns] == [
        (datetime(2024, 2, 3, 10, 0, tzinfo=UTC), "I just adopted a greyhound called Pixel."),
        (datetime(2024, 2, 3, 10, 5, tzinfo=UTC), "Pixel is afraid of the vacuum cleaner."),
    ]
    assert sessions["import-2024-02-03"].ended_at is not None
    memories = await ms.list(ANA)
    assert any("Pixel" in m.content for m in memories), [m.content for m in memories]
    # a captured memory is dated as said (observed_at: the message's time) and sourced to its imported turn;
    # created_at is when memstack recorded it
    pixel = next(m for m in memories if "greyhound" in m.content)
    assert pixel.observed_at == datetime(2024, 2, 3, 10, 0, tzinfo=UTC)
    assert pixel.source_turn_ids == ("import-2024-02-03:1",)
    lena = next(m for m in memories if "Ghent" in m.content)
    assert lena.observed_at == datetime(2024, 2, 10, 7, 30, tzinfo=UTC) and lena.source_turn_ids == ("family:1",)
    (ben_turn,) = await ms.store.archive.turns(BEN)
    assert ben_turn.at == datetime(2024, 3, 1, 10, 0, tzinfo=UTC)  # Unix seconds
    assert await ms.recall(ANA, "what is my dog afraid of?", limit=3)

    before = await ms.export(ANA)
    await ms.users.import_messages(path)  # again: nothing new
    assert {**await ms.export(ANA), "exported_at": before["exported_at"]} == before


async def test_a_bad_jsonl_line_refuses_the_whole_file(ms: AsyncMemstack) -> None:
    with pytest.raises(ImportRefused, match="line 2: timestamp 'last tuesday'"):
        await ms.users.import_messages(DATA / "messages-bad-line.jsonl")
    assert await ms.store.archive.sessions(ANA) == [] and await ms.list(ANA, include_deleted=True) == []
    with pytest.raises(ImportRefused, match="line 1: it is not JSON"):
        await ms.users.import_messages("{not json")
    with pytest.raises(ImportRefused, match="line 1: role 'system'"):
        await ms.users.import_messages([{"user_id": "ana", "text": "hi", "timestamp": 0, "role": "system"}])
    with pytest.raises(ImportRefused, match="line 1: it has no 'text'"):
        await ms.users.import_messages([{"user_id": "ana", "timestamp": 0}])
    assert await ms.store.archive.sessions(ANA) == []
