"""The OpenAI Agents SDK adapter, run by the SDK itself: ``Runner.run`` with an ``OpenAIChatCompletionsModel`` whose
client speaks HTTP to memstack's scripted OpenAI-compatible server, over an embedded engine."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from memstack import AsyncMemstack
from memstack.adapters.openai_agents import MemstackSession, memory_tools
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

set_tracing_disabled(True)


@pytest.fixture
async def ms(tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as engine:
        yield engine


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def _agent(server: ScriptedOpenAIServer, ms: AsyncMemstack) -> Agent:
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="planner", openai_client=client)
    return Agent(name="planner", instructions="Plan meals.", model=model, tools=memory_tools(ms, "alice"))


async def test_a_run_recalls_through_the_tool_and_the_next_run_sees_the_history(
    ms: AsyncMemstack, server: ScriptedOpenAIServer
) -> None:
    await ms.add("alice", "User is vegetarian", category="preference")
    server.script(
        "planner",
        Reply.tool_call("recall_memory", {"query": "vegetarian", "limit": 5}),
        Reply.text("A vegetable curry, since you are vegetarian."),
        Reply.text("Mango sorbet."),
    )
    agent, session = _agent(server, ms), MemstackSession("dinner", ms, "alice")

    first = await Runner.run(agent, "What should I cook tonight?", session=session)
    assert first.final_output == "A vegetable curry, since you are vegetarian."
    tool_results = [m for m in server.requests[1].messages if m["role"] == "tool"]
    assert "User is vegetarian" in tool_results[0]["content"]  # the SDK ran memstack's recall

    again = MemstackSession("dinner", ms, "alice")  # another process, the same conversation
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
    turns = await ms.sessions.turns("alice", "dinner")  # memstack's own session: archived, summarized
    assert [t.user for t in turns if t.user] == ["What should I cook tonight?", "And dessert?"]


async def test_pop_and_clear_change_the_history_and_keep_the_users_memory(ms: AsyncMemstack) -> None:
    session = MemstackSession("s", ms, "alice", capture=False)
    await session.add_items(
        [
            {"role": "user", "content": "I live in Lyon."},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Noted."}]},
            {"type": "function_call", "name": "x", "arguments": "{}", "call_id": "c1"},  # a run's working: not kept
        ]
    )
    assert await session.pop_item() == {"role": "assistant", "content": "Noted."}
    assert await session.get_items() == [{"role": "user", "content": "I live in Lyon."}]
    assert await MemstackSession("s", ms, "alice").get_items() == [{"role": "user", "content": "I live in Lyon."}]

    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    assert await MemstackSession("s", ms, "alice").get_items() == []
    hits = await ms.recall("alice", "Lyon")  # what was said stays in the user's memory
    assert any("Lyon" in hit.text for hit in hits)
