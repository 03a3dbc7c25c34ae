"""``AsyncMemstack.ingest`` and ``AsyncMemstack.recall`` end to end: a real store (SQLite, and PostgreSQL where
marked), the offline classifier and summarizer, the hash embedder (lexical signal only, deterministic)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memstack import AsyncMemstack
from memstack.context import ContextRequest, assemble, build_session, default_agent
from memstack.errors import InputError
from memstack.recall import layer_hits
from memstack.recall.layers import EXCERPT_PREFIX
from memstack.turn.models import Models
from memstack.types import RecallKind, UserRef
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

ANA = UserRef("ana")
JUNE = datetime(2024, 6, 14, 18, 0, tzinfo=UTC)
OCTOBER = datetime(2024, 10, 3, 9, 30, tzinfo=UTC)
ASKED = datetime(2024, 11, 20, 12, 0, tzinfo=UTC)

BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=pytest.mark.postgres)]


def _talk(at: datetime, *lines: tuple[str, str]) -> list[dict[str, object]]:
    return [{"speaker": who, "content": text, "at": at + timedelta(minutes=i)} for i, (who, text) in enumerate(lines)]


JUNE_TALK = _talk(
    JUNE,
    ("Ana", "We went to the jazz concert downtown last night."),
    ("Bo", "How was the concert?"),
    ("Ana", "Loud, but the saxophone solo was wonderful."),
    ("Bo", "Glad you enjoyed it."),
)
OCTOBER_TALK = _talk(
    OCTOBER,
    ("Ana", "Another concert tonight, a string quartet this time."),
    ("Bo", "Which pieces did they play at the concert?"),
    ("Ana", "Mostly Haydn; my cousin Lupita came along."),
    ("Bo", "Haydn is a good choice."),
)


@pytest.fixture(params=BACKENDS)
async def ms(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else None
    async with AsyncMemstack(home=tmp_path, embedder="hash:64", database_url=url) as engine:
        yield engine


async def _import_both(ms: AsyncMemstack) -> None:
    await ms.ingest(ANA, "june", JUNE_TALK, user_speaker="Ana")
    await ms.ingest(ANA, "october", OCTOBER_TALK, user_speaker="Ana")


async def test_ingest_archives_each_exchange_at_its_own_time_with_vectors(ms: AsyncMemstack) -> None:
    done = await ms.ingest(ANA, "june", JUNE_TALK, user_speaker="Ana")
    assert done.turns == ("june:1", "june:2")
    assert done.message_ids == ("june:1:user", "june:1:assistant", "june:2:user", "june:2:assistant")
    archived = await ms.store.archive.turns(ANA, session_id="june", limit=10)
    assert [(t.turn, t.at) for t in archived] == [(1, JUNE), (2, JUNE + timedelta(minutes=2))]
    assert archived[1].user == "Loud, but the saxophone solo was wonderful."
    stored = await ms.store.archive_vectors.messages(ANA)
    assert [m.id for m in stored] == list(done.message_ids)
    assert all(m.embedding is not None for m in stored) and stored[1].speaker == "Bo"
    assert done.summary is not None  # the import ended the session: it has its cross-session line
    assert done.summary.session_id == "june"


async def test_recall_finds_archived_turns_with_their_source_ids(ms: AsyncMemstack) -> None:
    await _import_both(ms)
    items = await ms.recall(ANA, "who came along to hear Haydn?", k=3, at=ASKED)
    assert items[0].kind is RecallKind.TURN
    assert items[0].id == "october:2:user" and items[0].source_turn_ids == ("october:2",)
    assert items[0].text == "Ana: Mostly Haydn; my cousin Lupita came along."
    assert items[0].at == OCTOBER + timedelta(minutes=2)
    assert (
        items[0].context == "Bo: Which pieces did they play at the concert?"
    )  # the message before it, for the excerpt
    assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)


async def test_a_date_in_the_question_prefers_that_time(ms: AsyncMemstack) -> None:
    await _import_both(ms)
    june = await ms.recall(ANA, "the concert last June", k=1, at=ASKED, kinds=["turn"])
    october = await ms.recall(ANA, "the concert in October", k=1, at=ASKED, kinds=["turn"])
    assert june[0].session_id == "june" and october[0].session_id == "october"
    weeks = await ms.recall(ANA, "the concert seven weeks ago", k=1, at=ASKED, kinds=["turn"])
    assert weeks[0].session_id == "october"  # 20 Nov minus seven weeks: early October


async def test_memories_and_turns_are_ranked_together(ms: AsyncMemstack) -> None:
    await _import_both(ms)
    await ms.add(ANA, "User plays the cello in a quartet", category="fact")
    items = await ms.recall(ANA, "cello quartet", k=5, at=ASKED)
    kinds = {i.kind for i in items}
    assert kinds == {RecallKind.MEMORY, RecallKind.TURN}
    memory = next(i for i in items if i.kind is RecallKind.MEMORY)
    assert memory.text == "User plays the cello in a quartet" and memory.category is not None
    only = await ms.recall(ANA, "cello quartet", k=5, at=ASKED, kinds=["memory"])
    assert {i.kind for i in only} == {RecallKind.MEMORY}


async def test_recall_is_per_user_and_sees_later_imports(ms: AsyncMemstack) -> None:
    await ms.ingest(ANA, "june", JUNE_TALK, user_speaker="Ana")
    assert await ms.recall("bo", "saxophone", k=3, at=ASKED) == []
    assert not any(i.session_id == "october" for i in await ms.recall(ANA, "Haydn", k=3, at=ASKED))
    await ms.ingest(ANA, "october", OCTOBER_TALK, user_speaker="Ana")  # the cached index catches up
    assert (await ms.recall(ANA, "Haydn", k=1, at=ASKED))[0].session_id == "october"


async def test_bad_calls_say_what_to_do(ms: AsyncMemstack) -> None:
    with pytest.raises(InputError, match="user_speaker"):
        await ms.ingest(ANA, "x", [{"speaker": "Ana", "content": "hi"}])
    with pytest.raises(InputError, match="role must be"):
        await ms.ingest(ANA, "x", [{"role": "system", "content": "hi"}])
    with pytest.raises(InputError, match="ISO 8601"):
        await ms.ingest(ANA, "x", [{"role": "user", "content": "hi", "at": "yesterday"}])
    with pytest.raises(InputError, match="query"):
        await ms.recall(ANA, "  ")
    with pytest.raises(InputError, match="kinds"):
        await ms.recall(ANA, "hi", kinds=["summary"])


async def test_recalled_turns_render_as_dated_excerpts_and_are_trimmed_first(tmp_path: Path) -> None:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
        await _import_both(ms)
        await ms.add(ANA, "User's cousin is named Lupita", category="fact")
        items = await ms.recall(ANA, "Lupita Haydn concert", k=10, at=ASKED)
    hits = layer_hits(items)
    excerpts = [h for h in hits if h.id.startswith(EXCERPT_PREFIX)]
    assert excerpts and all(str(h.category).startswith("past conversation, 2024-") for h in excerpts)
    october = next(h for h in excerpts if h.category == "past conversation, 2024-10-03")
    assert (
        "Bo: Which pieces did they play at the concert?\nAna: Mostly Haydn; my cousin Lupita came along."
        in october.content
    )
    session = build_session({"timezone": "UTC"}, now=ASKED)
    agent = default_agent()
    full = assemble(ContextRequest("Who is Lupita?", agent, session, memories=hits))
    assert "Mostly Haydn" in _system(full.messages)
    lowest = min(hits, key=lambda h: h.score)
    tight = assemble(ContextRequest("Who is Lupita?", agent, session, memories=hits, budget_tokens=full.tokens - 5))
    assert lowest.content.splitlines()[0] not in _system(tight.messages)  # the lowest-scored entry goes first
    assert hits[0].content.splitlines()[0] in _system(tight.messages)


def _system(messages: Sequence[Any]) -> str:
    return str(messages[0].content)


async def test_a_chat_turn_sees_past_conversations_in_the_memory_layer(tmp_path: Path) -> None:
    """Layer 6 of a real turn (real HTTP to a scripted chat model): an excerpt of the imported conversation, dated;
    the current session's own messages are not recalled (layers 8-9 hold them); excerpts are not memories_used."""
    async with ScriptedOpenAIServer() as server:
        server.handle(lambda request: Reply.text("Noted."), model="chat")
        chat = server.chat_model("chat")
        try:
            async with AsyncMemstack(home=tmp_path, embedder="hash:64", models=Models(chat=chat)) as ms:
                await _import_both(ms)
                await ms.add(ANA, "User plays the cello", category="fact")
                first = await ms.chat(ANA, "Tell me about the saxophone solo again")
                await ms.chat(ANA, "And who heard Haydn with me?", session_id=first.session_id)
                result = await ms.chat(ANA, "saxophone solo saxophone solo", session_id=first.session_id)
        finally:
            await chat.aclose()
    requests = [r for r in server.chat_requests if r.model == "chat"]
    system = str(requests[0].messages[0]["content"])
    assert "past conversation, 2024-06-14" in system and "Loud, but the saxophone solo was wonderful." in system
    assert "Haydn" in str(requests[1].messages[0]["content"])
    last = str(requests[2].messages[0]["content"])
    assert "Tell me about the saxophone solo again" not in last  # this session's messages are not "past"
    assert all(not used.startswith(EXCERPT_PREFIX) for used in result.memories_used)


async def test_an_offline_sessions_excerpt_names_each_speaker_rightly(tmp_path: Path) -> None:
    """Offline, no reply is kept, so the message before a user's message is the user's previous one: it is shown
    as the user's (it was shown as the assistant's, "You: …"), and the two lines stay one excerpt."""
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:  # no chat model: the offline responder
        first = await ms.chat("ana", "I started learning the cello last spring.")
        await ms.chat("ana", "My teacher Marta says my bowing is improving.", session_id=first.session_id)
        assert await ms.wait_idle()
        items = await ms.recall("ana", "cello teacher Marta bowing", limit=5)
        later = await ms.chat("ana", "What does Marta think of my cello bowing?", new_session=True)
    excerpts = [h for h in layer_hits(items) if h.id.startswith(EXCERPT_PREFIX)]
    assert [h.content for h in excerpts] == [
        "User: I started learning the cello last spring.\nUser: My teacher Marta says my bowing is improving."
    ]
    recalled = next(i for i in items if i.kind is RecallKind.TURN and "Marta" in i.text)
    assert recalled.context_id == f"{first.session_id}:1:user"
    assert later.manifest is not None
    shown = [e.text for e in later.manifest.entries if e.source.startswith(f"memory:{EXCERPT_PREFIX}")]
    assert shown == [excerpts[0].content] and "You:" not in later.reply


async def test_a_chat_turn_shows_what_held_before_and_until_when(tmp_path: Path) -> None:
    """A superseded memory's past version reaches the memory layer of a turn, after the current memory and saying
    when it held, so the model can answer "where did I live before?"; default search and recall still leave it out."""
    async with ScriptedOpenAIServer() as server:
        server.handle(lambda request: Reply.text("Noted."), model="chat")
        chat = server.chat_model("chat")
        try:
            async with AsyncMemstack(home=tmp_path, embedder="hash:64", models=Models(chat=chat)) as ms:
                porto = await ms.add(ANA, "User lives in Porto", category="fact", valid_from=datetime(2019, 5, 2))
                await ms.supersede(ANA, porto.id, "User lives in Lisbon", at=datetime(2024, 3, 10, tzinfo=UTC))
                await ms.chat(ANA, "Where did I live before Lisbon? Porto?")
                searched = [h.memory.content for h in await ms.search(ANA, "User lives in Porto")]
                recalled = [i.text for i in await ms.recall(ANA, "User lives in Porto", kinds=["memory"])]
        finally:
            await chat.aclose()
    system = str(next(r for r in server.chat_requests if r.model == "chat").messages[0]["content"])
    assert "User lives in Porto (May 2019 to March 2024)" in system, system
    assert system.index("User lives in Lisbon") < system.index("User lives in Porto")
    assert searched == recalled == ["User lives in Lisbon"]
