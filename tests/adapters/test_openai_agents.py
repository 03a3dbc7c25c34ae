"""The OpenAI Agents SDK adapter, run by the SDK itself: ``Runner.run`` with an ``OpenAIChatCompletionsModel`` whose
client speaks HTTP to memstack's scripted OpenAI-compatible server, over an embedded engine and over the client of a
real memstack server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from memstack import AsyncMemstack
from memstack.adapters.openai_agents import MemstackSession, memory_tools
from memstack.client import AsyncMemstackClient
from memstack.config import Config
from memstack.errors import InputError
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

set_tracing_disabled(True)

Backend = AsyncMemstack | AsyncMemstackClient


@pytest.fixture(scope="module")
def memstack_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = Config.resolve(home=tmp_path_factory.mktemp("agents-server"), embedder="hash:64")
    with BackgroundServer(create_app(config, settings=ServerSettings(auth="local"))) as running:
        yield running.url


@pytest.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as engine:
        yield engine


@pytest.fixture
async def remote(memstack_server: str) -> AsyncIterator[AsyncMemstackClient]:
    async with AsyncMemstackClient(memstack_server) as client:
        yield client


@pytest.fixture(params=["embedded", "remote"])
def ms(request: pytest.FixtureRequest) -> Backend:
    backend: Backend = request.getfixturevalue(request.param)
    return backend


@pytest.fixture
def alice(request: pytest.FixtureRequest) -> str:
    """A user id no other test uses (the server is shared by the module's tests)."""
    return f"alice-{request.node.name}".replace("[", "-").replace("]", "")[:200]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def _agent(server: ScriptedOpenAIServer, ms: Backend, user: str) -> Agent:
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="planner", openai_client=client)
    return Agent(name="planner", instructions="Plan meals.", model=model, tools=memory_tools(ms, user))


async def test_a_run_recalls_through_the_tool_and_the_next_run_sees_the_history(
    ms: Backend, server: ScriptedOpenAIServer, alice: str
) -> None:
    await ms.add(alice, "User is vegetarian", category="preference")
    server.script(
        "planner",
        Reply.tool_call("recall_memory", {"query": "vegetarian", "limit": 5}),
        Reply.text("A vegetable curry, since you are vegetarian."),
        Reply.text("Mango sorbet."),
    )
    agent, session = _agent(server, ms, alice), MemstackSession("dinner", ms, alice)

    first = await Runner.run(agent, "What should I cook tonight?", session=session)
    assert first.final_output == "A vegetable curry, since you are vegetarian."
    tool_results = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert "User is vegetarian" in tool_results[0]["content"]  # the SDK ran memstack's recall

    again = MemstackSession("dinner", ms, alice)  # another process, the same conversation
    await Runner.run(agent, "And dessert?", session=again)
    sent = [(m["role"], m["content"]) for m in server.requests[2].messages if m["role"] in ("user", "assistant")]
    assert sent == [
        ("user", "What should I cook tonight?"),
        ("assistant", "A vegetable curry, since you are vegetarian."),
        ("user", "And dessert?"),
    ]
    assert await again.get_items(limit=2) == [
        {"role": "user", "content": "And dessert?"},
        {"role": "assistant", "content": "Mango sorbet."},
    ]
    turns = await ms.sessions.turns(alice, "dinner")  # memstack's own session: archived, summarized
    assert [t.user for t in turns if t.user] == ["What should I cook tonight?", "And dessert?"]


async def test_pop_and_clear_change_the_history_and_keep_the_users_memory(ms: Backend, alice: str) -> None:
    session = MemstackSession("s", ms, alice, capture=False)
    await session.add_items(
        [
            {"role": "user", "content": "I live in Lyon."},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]},
            {"type": "function_call", "name": "x", "arguments": "{}", "call_id": "c1"},  # a run's working: not kept
        ]
    )
    assert await session.pop_item() == {"role": "assistant", "content": "Noted."}
    assert await session.get_items() == [{"role": "user", "content": "I live in Lyon."}]
    assert await MemstackSession("s", ms, alice).get_items() == [{"role": "user", "content": "I live in Lyon."}]

    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    assert await MemstackSession("s", ms, alice).get_items() == []
    hits = await ms.recall(alice, "Lyon")  # what was said stays in the user's memory
    assert any("Lyon" in hit.text for hit in hits)


async def test_an_exchange_a_forgotten_memory_hides_leaves_the_history(ms: Backend, alice: str) -> None:
    session = MemstackSession("trip", ms, alice)
    await session.add_items([{"role": "user", "content": "Remember that my passport number is X1234567."}])
    await session.add_items([{"role": "assistant", "content": "Saved your passport number."}])
    await session.add_items([{"role": "user", "content": "I am flying to Oslo on Friday."}])
    [memory] = [m for m in await ms.list(alice) if "passport" in m.content]
    await ms.forget(alice, memory.id)  # hides the exchanges it came from
    items = await MemstackSession("trip", ms, alice).get_items()
    assert not any("passport" in item["content"].lower() for item in items)
    assert {"role": "user", "content": "I am flying to Oslo on Friday."} in items
    turns = await ms.sessions.turns(alice, "trip")
    assert [t.turn for t in turns] == [1, 2, 3] and "hidden" in turns[0].flags and turns[0].user == ""
    if isinstance(ms, AsyncMemstack):  # the record keeps it (a restore shows it again): the library's view only
        [record] = await ms.sessions.turns(alice, "trip", include_hidden=True, limit=1)
        assert "passport" in record.user
    else:
        with pytest.raises(InputError, match="not offered by the HTTP API"):
            await ms.sessions.turns(alice, "trip", include_hidden=True)
