"""The pydantic-ai adapter, run by pydantic-ai itself: an ``Agent`` whose model is pydantic-ai's ``FunctionModel``
(scripted tool calls, and a record of every request it was sent) over an embedded engine."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from memstack import AsyncMemstack
from memstack.adapters._common import CONTEXT_HEADER, require
from memstack.adapters.pydantic_ai import memory_context, memory_tools
from memstack.errors import MissingExtra


@pytest.fixture
async def ms(tmp_path: Path) -> AsyncIterator[AsyncMemstack]:
    async with AsyncMemstack(home=tmp_path, embedder="hash:64") as engine:
        yield engine


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


def _blocks(messages: list[ModelMessage]) -> list[tuple[int, int, str]]:
    """memstack's blocks the model was sent: (request, part, text). pydantic-ai sends a system part that is not at
    the start of the conversation as ``<system>…`` on the user channel (its own framing), so both kinds count."""
    return [
        (i, j, p.content)
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest)
        for j, p in enumerate(m.parts)
        if isinstance(p, SystemPromptPart | UserPromptPart)
        and isinstance(p.content, str)
        and CONTEXT_HEADER in p.content
    ]


def _prompt(request: ModelRequest) -> bool:
    return any(isinstance(p, UserPromptPart) and CONTEXT_HEADER not in str(p.content) for p in request.parts)


async def test_the_model_saves_recalls_and_forgets_through_the_tools(ms: AsyncMemstack) -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = _returns(messages)
        if not returns:
            return ModelResponse(
                parts=[ToolCallPart("save_memory", {"content": "User is vegetarian", "category": "preference"})]
            )
        if len(returns) == 1:
            return ModelResponse(parts=[ToolCallPart("recall_memory", {"query": "vegetarian"})])
        if len(returns) == 2:
            memory_id = re.search(r"\[([^\]]+)\]", str(returns[0].content)).group(1)  # type: ignore[union-attr]
            return ModelResponse(parts=[ToolCallPart("forget_memory", {"memory_id": memory_id})])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), tools=memory_tools(ms, "alice"))
    result = await agent.run("I'm vegetarian, remember that.")

    saved, recalled, forgot = (str(p.content) for p in _returns(result.all_messages()))
    assert saved.startswith("saved [") and "vegetarian" in saved
    assert "vegetarian" in recalled and "(memory" in recalled
    assert forgot.startswith("forgot [")
    (memory,) = await ms.list("alice", include_deleted=True)
    assert memory.content == "User is vegetarian" and not memory.is_active  # soft: restorable
    assert memory.deleted_by is not None and memory.deleted_by.value == "ai"


async def test_a_mistake_comes_back_to_the_model_as_the_tools_answer(ms: AsyncMemstack) -> None:
    agent = Agent(TestModel(call_tools=["forget_memory"]), tools=memory_tools(ms, "alice"))
    result = await agent.run("forget it")
    (answer,) = _returns(result.all_messages())
    assert str(answer.content).startswith("error:"), answer.content


async def test_memstacks_context_reaches_the_model_once_before_the_prompt_it_answers(ms: AsyncMemstack) -> None:
    await ms.add("alice", "User is vegetarian", category="preference")
    await ms.ingest(
        "alice",
        "s1",
        [{"role": "user", "content": "Plan a dinner for Friday."}, {"role": "assistant", "content": "Pasta it is."}],
        end=False,
    )
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if not _returns(messages[-1:]):
            return ModelResponse(parts=[ToolCallPart("recall_memory", {"query": "dinner"})])
        return ModelResponse(parts=[TextPart("ok")])

    agent = Agent(
        FunctionModel(model),
        tools=memory_tools(ms, "alice"),
        capabilities=[memory_context(ms, "alice", session_id="s1")],
    )
    first = await agent.run("What should I cook, given that I'm vegetarian?")
    await agent.run("And for dessert?", message_history=first.all_messages())

    assert len(seen) == 4  # two runs, each a tool step and an answer
    for messages in seen:  # every request, the tool steps and the second run's included: one block, the current one
        ((at, part, block),) = _blocks(messages)
        asked = [i for i, m in enumerate(messages) if isinstance(m, ModelRequest) and _prompt(m)]
        assert at == asked[-1] and isinstance(messages[at].parts[part + 1], UserPromptPart)  # before the latest prompt
        assert "## Earlier in this session" in block  # layer 8: the imported turn's summary
    assert "User is vegetarian" in _blocks(seen[0])[0][2]  # layer 6: recalled for "… I'm vegetarian?"
    prompts = [
        p.content for m in seen[-1] if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)
    ]
    assert prompts[-1] == "And for dessert?" and CONTEXT_HEADER in prompts[-2]  # the second run's block is its own


async def test_no_block_when_memstack_knows_nothing(ms: AsyncMemstack) -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("hello")])

    agent = Agent(FunctionModel(model), capabilities=[memory_context(ms, "nobody")])
    await agent.run("hi")
    assert _blocks(seen[0]) == []


def test_a_missing_framework_names_the_extra_that_installs_it() -> None:
    with pytest.raises(MissingExtra, match=re.escape("pip install 'memstack[pydantic-ai]'")):
        require("pydantic_ai_not_installed", adapter="pydantic-ai", package="pydantic-ai-slim", extra="pydantic-ai")
