"""Where superseding closes a memory's interval (:mod:`memstack.capture.supersede`): at the time the news states,
read against the message's time, else at the message's time (never the time it was processed), and the old fact is
kept as a past version that ``as_of`` reads find. The classifier is the LLM one over the scripted server (so the
news is worded as written here); the update judge is the offline one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstack.capture.judge.offline import LearnedJudge
from memstack.capture.pipeline import CapturePipeline
from memstack.capture.supersede import closing_time
from memstack.dates import find_dates, stated_start, when_held
from memstack.embed import Embedder
from memstack.store import Store
from memstack.types import Category, MemoryFilter, NewMemory, UpdateAction
from memstack_testing.openai_server import ScriptedOpenAIServer

from .support import ALICE, AT, found, llm_classifier, mem, open_store


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


@pytest.fixture
async def store(tmp_path: Path, minilm: Embedder) -> AsyncIterator[Store]:
    opened = await open_store(f"sqlite:///{tmp_path / 'memstack.db'}", minilm)
    yield opened
    await opened.close()


async def _move(store: Store, minilm: Embedder, server: ScriptedOpenAIServer, news: str, message: str) -> str:
    """Alice lives in Porto since 2019; ``message`` (classified as ``news``) is said at AT; the memory's id."""
    text = "User lives in Porto."
    old = await store.memories.add(
        ALICE,
        NewMemory(text, Category.FACT, valid_from=datetime(2019, 1, 1, tzinfo=UTC)),
        (await minilm.embed([text]))[0],
    )
    server.script("classifier-mini", found(mem(news)))
    made = CapturePipeline(store, minilm, llm_classifier(server), updates=LearnedJudge(minilm))
    try:
        result = await made.start(ALICE, message, at=AT, session_id="s1", turn=2)
    finally:
        await made.classifier.aclose()
    (update,) = result.updates
    assert (update.action, update.id) == (UpdateAction.UPDATED, old.id)
    return old.id


async def _past(store: Store, memory_id: str) -> tuple[datetime | None, datetime | None, str]:
    [past] = [m for m in await store.index.list(ALICE, MemoryFilter(include_deleted=True)) if m.id != memory_id]
    return past.valid_from, past.valid_to, past.content


async def test_news_with_a_stated_time_closes_the_old_fact_then(
    store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    memory_id = await _move(store, minilm, server, "User moved to Lisbon last month.", "I moved to Lisbon last month")
    april = datetime(2024, 4, 1, tzinfo=UTC)  # "last month" of a message said on 9 May 2024
    assert await _past(store, memory_id) == (datetime(2019, 1, 1, tzinfo=UTC), april, "User lives in Porto.")
    current = await store.memories.get(ALICE, memory_id)
    assert current.valid_from == april and "Lisbon" in current.content
    assert [m.content for m in await store.index.list(ALICE, MemoryFilter(as_of=datetime(2024, 3, 15)))] == [
        "User lives in Porto."
    ]
    assert [m.id for m in await store.index.list(ALICE)] == [memory_id]  # the default read: the current memory


async def test_news_without_a_time_closes_the_old_fact_when_it_was_said(
    store: Store, minilm: Embedder, server: ScriptedOpenAIServer
) -> None:
    memory_id = await _move(store, minilm, server, "User moved to Lisbon.", "I moved to Lisbon!")
    _, end, _ = await _past(store, memory_id)
    assert end == AT  # the message's time, not the time the job ran
    assert (await store.memories.get(ALICE, memory_id)).valid_from == AT


def test_where_an_interval_closes() -> None:
    said = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
    [last_month] = find_dates("I moved to Berlin last month", said)
    assert stated_start([last_month], said) == datetime(2026, 2, 1, tzinfo=UTC)
    assert closing_time(datetime(2026, 2, 1, tzinfo=UTC), said) == datetime(2026, 2, 1, tzinfo=UTC)
    assert closing_time(said + timedelta(days=30), said) == said  # a plan closes nothing ahead of the message
    assert closing_time(None, said) == said
    assert stated_start(find_dates("I'm moving to Berlin next month", said), said) is None


def test_when_a_fact_held_reads_in_months() -> None:
    now = datetime(2026, 11, 1, tzinfo=UTC)
    march = datetime(2026, 3, 4, tzinfo=UTC)
    assert when_held(None, march, now) == "until March 2026"
    assert when_held(datetime(2024, 6, 1, tzinfo=UTC), march, now) == "June 2024 to March 2026"
    assert when_held(datetime(2027, 1, 1, tzinfo=UTC), None, now) == "from January 2027"
    assert when_held(march, None, now) is None  # holds now: nothing to say


async def test_a_captured_fact_starts_when_the_sentence_says(minilm: Embedder) -> None:
    from memstack.capture.offline import OfflineClassifier

    classifier = OfflineClassifier(minilm)
    stated = await classifier.classify("I started working at the city library in March 2023.", at=AT)
    assert stated and stated[0].valid_from == datetime(2023, 3, 1, tzinfo=UTC), stated
    unstated = await classifier.classify("I work at the city library.", at=AT)
    assert unstated and unstated[0].valid_from is None
