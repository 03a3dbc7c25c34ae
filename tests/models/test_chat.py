"""The OpenAI-compatible chat model over real HTTP against the scripted server."""

import json
import socket
import time

import pytest

from memstack.errors import MalformedResponse, ProviderError, ProviderTimeout
from memstack.models import ChatModel, Message, OpenAIChatModel, ToolCall, ToolSpec, collect, get_model
from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer, ScriptedToolCall

RECALL = ToolSpec(
    "recall_memory",
    "Search the user's long-term memories",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
HI = [Message.system("You are a tutor."), Message.user("hi")]


async def test_complete_returns_text_usage_and_model(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("Hello, Maya!", usage=(12, 3)))
    async with server.chat_model("gpt-4o-mini") as model:
        assert isinstance(model, ChatModel)
        reply = await model.complete(HI, temperature=0.2, max_tokens=50)
    assert reply.text == "Hello, Maya!" and reply.finish_reason == "stop" and reply.model == "gpt-4o-mini"
    assert reply.usage is not None and (reply.usage.prompt_tokens, reply.usage.total_tokens) == (12, 15)
    (request,) = server.chat_requests
    assert request.messages == [{"role": "system", "content": "You are a tutor."}, {"role": "user", "content": "hi"}]
    assert request.body["temperature"] == 0.2
    assert request.body["max_completion_tokens"] == 50  # the openai row's parameter name
    assert request.headers["authorization"] == "Bearer sk-scripted"
    assert "tools" not in request.body and "response_format" not in request.body


async def test_dict_messages_are_accepted_and_other_rows_use_max_tokens(server: ScriptedOpenAIServer) -> None:
    server.script("llama3.2", "ok")
    async with get_model("ollama:llama3.2", base_url=server.base_url) as model:
        await model.complete([{"role": "user", "content": "hi"}], max_tokens=7)
    (request,) = server.requests
    assert request.body["max_tokens"] == 7 and request.headers["authorization"] == "Bearer not-needed"


async def test_streaming_text_arrives_in_deltas_then_a_final_chunk(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", "The quick brown fox jumps.")
    async with server.chat_model() as model:
        chunks = [chunk async for chunk in model.stream(HI)]
    assert [c.text for c in chunks[:-1]] == ["The ", "quick ", "brown ", "fox ", "jumps."]
    final = chunks[-1]
    assert final.text == "" and final.finish_reason == "stop" and final.tool_calls == ()
    assert final.usage is not None and final.usage.completion_tokens == 5
    request = server.requests[0]
    assert request.stream and request.body["stream_options"] == {"include_usage": True}


async def test_streamed_tool_calls_are_assembled_from_fragments(server: ScriptedOpenAIServer) -> None:
    long_query = "what did I say about my exam schedule and my diet last month"
    server.script(
        "gpt-4o-mini",
        Reply.calling(
            ScriptedToolCall("recall_memory", json.dumps({"query": long_query}), "call_a"),
            ScriptedToolCall("save_memory", json.dumps({"content": "likes tea", "category": "preference"}), "call_b"),
            content="Let me check.",
        ),
    )
    async with server.chat_model() as model:
        reply = await collect(model.stream(HI, tools=[RECALL], tool_choice="auto"))
    assert reply.text == "Let me check." and reply.finish_reason == "tool_calls"
    assert [(c.id, c.name) for c in reply.tool_calls] == [("call_a", "recall_memory"), ("call_b", "save_memory")]
    assert reply.tool_calls[0].arguments == {"query": long_query}
    assert reply.tool_calls[1].arguments["category"] == "preference"


async def test_tool_call_round_trip(server: ScriptedOpenAIServer) -> None:
    def answer_with_the_tool_result(request: RecordedRequest) -> Reply:
        assert request.messages[-1] == {"role": "tool", "content": '["likes tea"]', "tool_call_id": "call_7"}
        return Reply.text("You like tea.")

    server.script("gpt-4o-mini", Reply.tool_call("recall_memory", {"query": "drinks"}, id="call_7"))
    server.script("gpt-4o-mini", answer_with_the_tool_result)
    async with server.chat_model() as model:
        first = await model.complete(HI, tools=[RECALL], tool_choice="recall_memory")
        (call,) = first.tool_calls
        assert (call.id, call.name, call.arguments) == ("call_7", "recall_memory", {"query": "drinks"})
        second = await model.complete([*HI, first.message, Message.tool(call.id, ["likes tea"])], tools=[RECALL])
    assert second.text == "You like tea."
    first_request, second_request = server.requests
    assert first_request.tools == [RECALL.to_openai()]
    assert first_request.body["tool_choice"] == {"type": "function", "function": {"name": "recall_memory"}}
    assert second_request.messages[2]["tool_calls"][0]["function"] == {
        "name": "recall_memory",
        "arguments": '{"query": "drinks"}',
    }


@pytest.mark.parametrize("streamed", [False, True])
async def test_malformed_tool_arguments_raise_malformed_response(server: ScriptedOpenAIServer, streamed: bool) -> None:
    server.script("gpt-4o-mini", Reply.tool_call("recall_memory", '{"query": "unterminated'))
    async with server.chat_model() as model:
        with pytest.raises(MalformedResponse, match="recall_memory") as info:
            if streamed:
                await collect(model.stream(HI, tools=[RECALL]))
            else:
                await model.complete(HI, tools=[RECALL])
    assert info.value.body == '{"query": "unterminated'


async def test_complete_json_asks_for_json_mode_and_parses(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", {"memories": [{"content": "likes tea", "confidence": 0.9}]})
    async with server.chat_model() as model:
        data = await model.complete_json([Message.system("Extract memories as JSON."), Message.user("I like tea")])
    assert data == {"memories": [{"content": "likes tea", "confidence": 0.9}]}
    (request,) = server.requests
    assert request.response_format == {"type": "json_object"}
    assert request.messages[0]["content"] == "Extract memories as JSON."  # already mentions JSON: left alone


async def test_complete_json_adds_the_json_instruction_when_the_prompt_lacks_it(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", {"ok": True}, {"ok": True})
    async with server.chat_model() as model:
        await model.complete_json([Message.system("Summarise."), Message.user("text")])
        await model.complete_json([Message.user("text")])
    with_system, without_system = server.requests
    assert with_system.messages[0]["content"] == "Summarise.\n\nReply with one JSON object and nothing else."
    assert len(with_system.messages) == 2
    assert without_system.messages[0] == {"role": "system", "content": "Reply with one JSON object and nothing else."}


async def test_endpoints_without_json_mode_get_no_response_format(server: ScriptedOpenAIServer) -> None:
    server.script("local-model", Reply.text('```json\n{"memories": []}\n```'))
    async with get_model("custom:local-model", base_url=server.base_url) as model:
        assert await model.complete_json([Message.user("Return JSON")]) == {"memories": []}
    assert server.requests[0].response_format is None


@pytest.mark.parametrize(
    "reply",
    [Reply.malformed_json(), Reply.text("Sure, I saved that for you."), Reply.text("[1, 2, 3]")],
)
async def test_complete_json_raises_malformed_response_with_the_raw_text(
    server: ScriptedOpenAIServer, reply: Reply
) -> None:
    server.script("gpt-4o-mini", reply)
    async with server.chat_model() as model:
        with pytest.raises(MalformedResponse) as info:
            await model.complete_json([Message.user("extract, as JSON")])
    assert info.value.body == reply.content


@pytest.mark.parametrize(("status", "hint"), [(500, "retry later"), (503, "retry later"), (429, "rate limited")])
async def test_http_errors_become_provider_errors_with_status_and_body(
    server: ScriptedOpenAIServer, status: int, hint: str
) -> None:
    server.script("gpt-4o-mini", Reply.error(status, "upstream exploded"))
    async with server.chat_model() as model:
        with pytest.raises(ProviderError) as info:
            await model.complete(HI)
    error = info.value
    assert type(error) is ProviderError and error.status == status
    assert error.body is not None and json.loads(error.body)["error"]["message"] == "upstream exploded"
    assert f"HTTP {status}: upstream exploded" in str(error) and hint in str(error)
    assert len(server.requests) == 1  # the SDK's own retries are off


async def test_a_non_json_error_body_is_kept_verbatim(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.error(502, body="<html>Bad Gateway</html>"))
    async with server.chat_model() as model:
        with pytest.raises(ProviderError) as info:
            await model.complete(HI)
    assert info.value.status == 502 and info.value.body == "<html>Bad Gateway</html>"


async def test_wrong_key_says_where_the_key_comes_from() -> None:
    async with (
        ScriptedOpenAIServer(api_key="sk-right") as server,
        get_model("openai:gpt-4o-mini", base_url=server.base_url, api_key="sk-wrong") as model,
    ):
        with pytest.raises(ProviderError, match=r"check the API key \(\$OPENAI_API_KEY") as info:
            await model.complete(HI)
    assert info.value.status == 401


async def test_http_errors_on_a_stream_request_map_the_same_way(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.error(503, "overloaded"))
    async with server.chat_model() as model:
        with pytest.raises(ProviderError) as info:
            await collect(model.stream(HI))
    assert info.value.status == 503 and "overloaded" in (info.value.body or "")


async def test_a_dropped_connection_is_a_provider_error_saying_what_to_check(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.dropped(), "back again")
    async with server.chat_model() as model:
        with pytest.raises(ProviderError, match="check that the server is running") as info:
            await model.complete(HI)
        assert type(info.value) is ProviderError and info.value.status is None
        assert (await model.complete(HI)).text == "back again"  # the client recovers on a new connection


async def test_a_stream_broken_mid_answer_is_a_provider_error(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("one two three four five six", drop_after_chunks=3))
    received: list[str] = []
    async with server.chat_model() as model:
        with pytest.raises(ProviderError, match="broke mid-answer") as info:
            async for chunk in model.stream(HI):
                received.append(chunk.text)
    assert info.value.status is None and "".join(received) == "one two "


async def test_nothing_listening_is_a_provider_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with get_model("vllm:m", base_url=f"http://127.0.0.1:{port}/v1") as model:
        with pytest.raises(ProviderError, match="MEMSTACK_VLLM_BASE_URL") as info:
            await model.complete(HI)
    assert info.value.status is None and not isinstance(info.value, ProviderTimeout)


async def test_timeout_is_the_deadline_of_the_whole_call(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("too late").after(3.0))
    async with server.chat_model() as model:
        started = time.perf_counter()
        with pytest.raises(ProviderTimeout, match=r"within 0\.25s"):
            await model.complete(HI, timeout=0.25)
    assert time.perf_counter() - started < 1.5


async def test_default_timeout_comes_from_the_model(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("too late").after(3.0))
    async with server.chat_model(timeout=0.2) as model:
        with pytest.raises(ProviderTimeout):
            await model.complete(HI)


async def test_stream_timeouts_cover_the_start_and_each_gap(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("slow start").after(3.0))
    server.script("gpt-4o-mini", Reply.text("a b c", chunk_delay_s=3.0))
    words = " ".join(f"w{i}" for i in range(30))
    server.script("gpt-4o-mini", Reply.text(words, chunk_delay_s=0.025))
    async with server.chat_model() as model:
        with pytest.raises(ProviderTimeout):
            await collect(model.stream(HI, timeout=0.25))
        with pytest.raises(ProviderTimeout):
            await collect(model.stream(HI, timeout=0.25))
        # gaps shorter than the timeout are fine even when the whole stream takes longer than it
        started = time.perf_counter()
        reply = await collect(model.stream(HI, timeout=0.5))
    assert reply.text == words and time.perf_counter() - started > 0.75


async def test_a_stream_that_ends_without_finishing_is_malformed(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("cut", finish_reason=""))
    async with server.chat_model() as model:
        with pytest.raises(MalformedResponse, match="ended before the model finished"):
            await collect(model.stream(HI))


async def test_stopping_a_stream_early_closes_it(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.text("many words " * 50), "next")
    async with server.chat_model() as model:
        async for _ in model.stream(HI):
            break
        assert (await model.complete(HI)).text == "next"


async def test_models_close_their_client_and_can_be_reopened(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", "one", "two")
    model = server.chat_model()
    assert isinstance(model, OpenAIChatModel) and "127.0.0.1" in repr(model)
    assert (await model.complete(HI)).text == "one"
    await model.aclose()
    await model.aclose()  # idempotent
    assert (await model.complete(HI)).text == "two"  # a new client on demand
    await model.aclose()


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        ("<html><body>Welcome to nginx!</body></html>", "nginx"),
        ('{"object": "chat.completion", "choices": []}', '"choices":[]'),
        ('{"choices": [{"message": {"role": "assistant", "content": 5}}]}', '"content":5'),
        ("{not json", "{not json"),
    ],
)
async def test_answers_that_are_not_chat_completions_are_malformed(
    server: ScriptedOpenAIServer, body: str, kept: str
) -> None:
    server.script("gpt-4o-mini", Reply.raw(body))
    async with server.chat_model() as model:
        with pytest.raises(MalformedResponse, match="API root") as info:
            await model.complete(HI)
    assert kept in (info.value.body or "")


async def test_a_stream_request_answered_without_events_is_malformed(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.raw('{"choices": []}', headers={"content-type": "text/event-stream"}))
    async with server.chat_model() as model:
        with pytest.raises(MalformedResponse, match="ended before the model finished"):
            await collect(model.stream(HI))


async def test_a_request_is_the_json_the_sdk_would_send(server: ScriptedOpenAIServer) -> None:
    """The model posts the request it builds without the SDK's request transform (3-8 ms of the event loop per call
    for a dozen messages): that is only right while the transform would change nothing in it, for every part a
    request can hold (tools, a forced tool, tool calls and results, a JSON schema, a name, a stream)."""
    from openai._utils import async_maybe_transform
    from openai.types.chat import completion_create_params as params

    server.script("gpt-4o-mini", Reply.text('{"ok": true}'), Reply.text("streamed"))
    call = ToolCall.parse("call_7", "recall_memory", '{"query": "dates"}')
    messages = [
        Message.system("You are a tutor."),
        Message.user("When is my exam?", name="maya"),
        Message.assistant(None, tool_calls=[call]),
        Message.tool("call_7", {"found": ["exam on 3 May 2027"], "score": 0.91}),
        Message.user("And the one after?"),
    ]
    schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}, "strict": True}}
    async with server.chat_model("gpt-4o-mini") as model:
        await model.complete(
            messages, tools=[RECALL], tool_choice="recall_memory", response_format=schema, temperature=0.3, max_tokens=9
        )
        await collect(model.stream(messages, tools=[RECALL], temperature=0.0))
    plain, streamed = server.chat_requests
    assert plain.body["tool_choice"] == {"type": "function", "function": {"name": "recall_memory"}}
    assert plain.body["messages"][2]["tool_calls"][0]["id"] == "call_7" and streamed.body["stream"] is True
    assert await async_maybe_transform(plain.body, params.CompletionCreateParamsNonStreaming) == plain.body
    assert await async_maybe_transform(streamed.body, params.CompletionCreateParamsStreaming) == streamed.body
    assert plain.headers["authorization"] == streamed.headers["authorization"] == "Bearer sk-scripted"
