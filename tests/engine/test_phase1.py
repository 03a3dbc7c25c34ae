"""Phase 1: the model call and the tool loop, over real HTTP against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import pytest

from memstack.errors import ProviderError
from memstack.models import Message, ToolCall, ToolSpec
from memstack.turn.phase1 import ModelParams, Phase1Done, ToolSupport, run_phase1
from memstack.types import ChatToken, ChatToolEvent, ToolUse
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer, ScriptedToolCall


@dataclass
class Clock:
    """A tool set of one tool, ``now``; any other name is an error result."""

    calls: list[ToolCall] = field(default_factory=list)

    @property
    def specs(self) -> Sequence[ToolSpec]:
        return (ToolSpec("now", "The current time.", {"type": "object", "properties": {}}),)

    async def call(self, call: ToolCall) -> ToolUse:
        self.calls.append(call)
        if call.name != "now":
            return ToolUse(call.name, call.arguments, json.dumps({"error": f"no tool {call.name}"}), error=True)
        return ToolUse(call.name, call.arguments, json.dumps({"time": "12:00"}))


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer() as scripted:
        yield scripted


async def _events(server: ScriptedOpenAIServer, tools: Clock | None, *, stream: bool, rounds: int = 4) -> list[object]:
    async with server.chat_model("chat") as model:
        messages = [Message.system("be brief"), Message.user("what time is it?")]
        return [e async for e in run_phase1(model, messages, tools, ModelParams(max_tool_rounds=rounds), stream=stream)]


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_calls_are_run_and_fed_back(server: ScriptedOpenAIServer, stream: bool) -> None:
    server.script("chat", Reply.tool_call("now", {}, id="call_a"), "It is noon.")
    clock = Clock()
    events = await _events(server, clock, stream=stream)
    done = events[-1]
    assert isinstance(done, Phase1Done) and done.text == "It is noon." and done.model == "openai:chat"
    assert [c.name for c in clock.calls] == ["now"] and done.tool_uses[0].result == '{"time": "12:00"}'
    assert any(isinstance(e, ChatToolEvent) for e in events)
    tokens = "".join(e.text for e in events if isinstance(e, ChatToken))
    assert tokens == ("It is noon." if stream else "")
    second = server.chat_requests[1]
    assert second.stream is stream
    assert second.messages[-2]["tool_calls"][0]["id"] == "call_a"
    assert second.messages[-1] == {"role": "tool", "content": '{"time": "12:00"}', "tool_call_id": "call_a"}
    assert [t["function"]["name"] for t in second.tools] == ["now"]


async def test_rounds_are_bounded_and_the_last_call_must_answer(server: ScriptedOpenAIServer) -> None:
    server.script("chat", *(Reply.tool_call("now", {}) for _ in range(2)), "Done.")
    events = await _events(server, Clock(), stream=False, rounds=2)
    requests = server.chat_requests
    assert len(requests) == 3  # two rounds with tools, then one that must answer in words
    assert requests[-1].body["tool_choice"] == "none"
    done = events[-1]
    assert isinstance(done, Phase1Done) and done.text == "Done." and len(done.tool_uses) == 2


async def test_unknown_tool_becomes_an_error_result(server: ScriptedOpenAIServer) -> None:
    server.script("chat", Reply.calling(ScriptedToolCall("delete_everything", "{}")), "I can't do that.")
    events = await _events(server, Clock(), stream=True)
    done = events[-1]
    assert isinstance(done, Phase1Done) and done.tool_uses[0].error
    assert "no tool delete_everything" in server.chat_requests[1].messages[-1]["content"]


async def test_without_tools_nothing_is_offered(server: ScriptedOpenAIServer) -> None:
    server.script("chat", "Hello.")
    events = await _events(server, None, stream=False)
    assert isinstance(events[-1], Phase1Done) and events[-1].text == "Hello."
    assert server.chat_requests[0].tools == [] and "tool_choice" not in server.chat_requests[0].body


async def test_model_failure_propagates_as_a_provider_error(server: ScriptedOpenAIServer) -> None:
    server.script("chat", Reply.error(500, "down"))
    with pytest.raises(ProviderError, match="HTTP 500"):
        await _events(server, None, stream=True)


@pytest.mark.parametrize("stream", [False, True])
async def test_a_model_without_tool_calling_answers_without_tools(server: ScriptedOpenAIServer, stream: bool) -> None:
    server.handle(lambda r: Reply.error(400, "tools are not supported") if r.tools else "Plain answer.", model="chat")
    support = ToolSupport()
    async with server.chat_model("chat") as model:
        messages = [Message.user("hi")]
        for _ in range(2):
            events = [
                e async for e in run_phase1(model, messages, Clock(), ModelParams(), stream=stream, support=support)
            ]
            assert isinstance(events[-1], Phase1Done) and events[-1].text == "Plain answer."
    assert [bool(r.tools) for r in server.chat_requests] == [True, False, False]  # asked once with tools, then never
    assert not support.accepts("openai:chat")


async def test_other_refusals_are_not_retried(server: ScriptedOpenAIServer) -> None:
    server.script("chat", Reply.error(401, "bad key"))
    with pytest.raises(ProviderError, match="HTTP 401"):
        async with server.chat_model("chat") as model:
            phase1 = run_phase1(
                model, [Message.user("hi")], Clock(), ModelParams(), stream=False, support=ToolSupport()
            )
            _ = [e async for e in phase1]
    assert len(server.chat_requests) == 1
