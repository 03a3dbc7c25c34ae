"""The scripted server itself, driven by the official openai SDK (sync and async) and by raw HTTP."""

import asyncio
import base64
import json
import textwrap
import time
from typing import Any

import httpx
import numpy as np
import openai
import pytest

from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer


def test_sync_code_uses_it_with_the_official_sync_client() -> None:
    with ScriptedOpenAIServer(models=("gpt-4o-mini",)) as server:
        server.script("gpt-4o-mini", "Hello from a thread", Reply.tool_call("save_memory", {"content": "likes tea"}))
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        first = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        second = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        listed = [m.id for m in client.models.list()]
        client.close()
    assert first.choices[0].message.content == "Hello from a thread"
    assert first.choices[0].finish_reason == "stop" and first.usage is not None
    call = second.choices[0].message.tool_calls[0]
    assert call.function.name == "save_memory" and json.loads(call.function.arguments) == {"content": "likes tea"}
    assert second.choices[0].finish_reason == "tool_calls"
    assert listed == ["gpt-4o-mini"]


async def test_async_sdk_streams_and_embeds_with_its_defaults(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", "streamed words")
    async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        embedded = await client.embeddings.create(model="text-embedding-3-small", input=["a b", "c"])
    assert "".join(pieces) == "streamed words"
    assert len(embedded.data) == 2 and len(embedded.data[0].embedding) == 64
    # the SDK asks for base64 by default; the server answers in kind
    assert server.embedding_requests[0].body.get("encoding_format") in (None, "base64")


def test_embeddings_honour_encoding_format_and_dimensions() -> None:
    with ScriptedOpenAIServer(embedding_dim=8) as server, httpx.Client(base_url=server.base_url) as http:
        as_floats = http.post("/embeddings", json={"model": "m", "input": "hello world"}).json()
        as_b64 = http.post(
            "/embeddings", json={"model": "m", "input": ["hello world"], "encoding_format": "base64"}
        ).json()
        shorter = http.post("/embeddings", json={"model": "m", "input": "hello", "dimensions": 4}).json()
        bad = http.post("/embeddings", json={"model": "m", "input": [1, 2, 3]})
    floats = np.array(as_floats["data"][0]["embedding"], dtype=np.float32)
    decoded = np.frombuffer(base64.b64decode(as_b64["data"][0]["embedding"]), dtype="<f4")
    assert floats.shape == (8,) and np.allclose(floats, decoded)
    assert abs(float(np.linalg.norm(floats)) - 1.0) > 0.5  # not unit length: clients must normalise
    assert len(shorter["data"][0]["embedding"]) == 4
    assert bad.status_code == 400 and "input" in bad.json()["error"]["message"]


def test_queues_are_per_model_with_a_wildcard_fallback() -> None:
    with ScriptedOpenAIServer() as server, httpx.Client(base_url=server.base_url) as http:
        server.script("small", "from small").script("*", "from any", "from any again")

        def ask(model: str) -> str:
            body = {"model": model, "messages": [{"role": "user", "content": "x"}]}
            response = http.post("/chat/completions", json=body)
            return str(response.json()["choices"][0]["message"]["content"])

        assert server.pending() == 3 and server.pending("small") == 1
        assert [ask("small"), ask("small"), ask("big")] == ["from small", "from any", "from any again"]
        unscripted = http.post(
            "/chat/completions", json={"model": "big", "messages": [{"role": "user", "content": "x"}]}
        )
        assert unscripted.status_code == 500
        assert "no reply for model 'big'" in unscripted.json()["error"]["message"]
        server.reset()
        assert server.requests == [] and server.pending() == 0


def test_function_handlers_see_the_request_and_can_be_async() -> None:
    async def slow_echo(request: RecordedRequest) -> str:
        await asyncio.sleep(0.01)
        return f"echo: {request.last_user_message}"

    with ScriptedOpenAIServer(default="default reply") as server, httpx.Client(base_url=server.base_url) as http:
        server.handle(lambda request: {"tools": len(request.tools)}, model="json-model")
        server.handle(slow_echo, model="echo")

        def ask(model: str, **extra: object) -> str:
            body = {"model": model, "messages": [{"role": "user", "content": "ping"}], **extra}
            return str(http.post("/chat/completions", json=body).json()["choices"][0]["message"]["content"])

        assert json.loads(ask("json-model", tools=[{"type": "function"}])) == {"tools": 1}
        assert ask("echo") == "echo: ping" and ask("echo") == "echo: ping"  # handlers are not used up
        assert ask("anything") == "default reply"


def test_an_exception_in_a_handler_is_a_500_now_and_raised_at_stop() -> None:
    def broken(request: RecordedRequest) -> str:
        raise KeyError("missing prompt field")

    server = ScriptedOpenAIServer().start()
    server.handle(broken)
    with httpx.Client(base_url=server.base_url) as http:
        response = http.post("/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 500 and "KeyError" in response.json()["error"]["message"]
    with pytest.raises(KeyError, match="missing prompt field"):
        server.stop()


def test_bad_requests_get_openai_style_errors() -> None:
    with ScriptedOpenAIServer(api_key="sk-right") as server, httpx.Client(base_url=server.base_url) as http:
        auth = {"Authorization": "Bearer sk-right"}
        assert http.get("/models").status_code == 401
        not_json = http.post("/chat/completions", content=b"{nope", headers=auth)
        no_messages = http.post("/chat/completions", json={"model": "m"}, headers=auth)
        unknown = http.get("/nothing-here", headers=auth)
    assert not_json.status_code == 400 and "not valid JSON" in not_json.json()["error"]["message"]
    assert no_messages.status_code == 400 and "messages" in no_messages.json()["error"]["message"]
    assert unknown.status_code == 404 and "/v1/chat/completions" in unknown.json()["error"]["message"]
    assert [r.path for r in server.requests] == [
        "/v1/models",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/nothing-here",
    ]
    assert server.requests[1].body is None and server.requests[1].raw == b"{nope"


def test_error_replies_carry_their_headers_and_raw_bodies() -> None:
    with ScriptedOpenAIServer() as server, httpx.Client(base_url=server.base_url) as http:
        server.script("m", Reply.error(429, "slow down", headers={"retry-after": "2"}), Reply.error(503, body="down"))
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        limited = http.post("/chat/completions", json=body)
        down = http.post("/chat/completions", json=body)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
    assert limited.json()["error"] == {"message": "slow down", "type": "rate_limit_error", "code": 429}
    assert down.status_code == 503 and down.text == "down"


def test_connections_are_kept_alive_between_requests() -> None:
    with ScriptedOpenAIServer() as server, httpx.Client(base_url=server.base_url) as http:
        server.handle(lambda request: "ok")
        ports = set()
        for _ in range(5):
            response = http.post(
                "/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "x"}]}
            )
            ports.add(response.extensions["network_stream"].get_extra_info("client_addr"))
    assert len(ports) == 1


async def test_slow_replies_do_not_block_other_requests(server: ScriptedOpenAIServer) -> None:
    server.handle(lambda request: Reply.text("done").after(0.3))
    async with server.chat_model() as model:
        started = time.perf_counter()
        replies = await asyncio.gather(*(model.complete([{"role": "user", "content": str(i)}]) for i in range(10)))
        elapsed = time.perf_counter() - started
    assert [r.text for r in replies] == ["done"] * 10
    assert elapsed < 2.0  # served concurrently: ten 0.3 s replies, not 3 s


async def test_wait_for_requests_sees_background_calls(server: ScriptedOpenAIServer) -> None:
    server.handle(lambda request: "ok")
    async with server.chat_model() as model:
        task = asyncio.create_task(model.complete([{"role": "user", "content": "from the background"}]))
        (request,) = await server.wait_for_requests(1)
        await task
    assert request.last_user_message == "from the background" and "from the background" in request.text
    with pytest.raises(TimeoutError, match="expected 2 requests"):
        await server.wait_for_requests(2, timeout=0.05)


def test_start_fails_loudly_when_the_port_is_taken() -> None:
    with ScriptedOpenAIServer() as first, pytest.raises(OSError):
        ScriptedOpenAIServer(port=first.port).start()


def test_error_replies_need_an_error_status() -> None:
    from memstack.errors import InputError

    with pytest.raises(InputError, match="4xx/5xx"):
        Reply.error(200)


async def test_the_quick_start_in_the_module_docstring_runs() -> None:
    from memstack_testing import openai_server

    doc = openai_server.__doc__ or ""
    block = doc.split("Quick start::", 1)[1].split("\nScripts:", 1)[0]
    source = "async def quick_start():\n" + textwrap.indent(textwrap.dedent(block).strip("\n"), "    ")
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    await namespace["quick_start"]()
