"""The retry helper, alone and around real calls to the scripted server."""

import itertools
import time

import pytest

from memstack.errors import ConfigError, InputError, MalformedResponse, ProviderError, ProviderTimeout
from memstack.models import Message, is_retryable, with_retry
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

EXTRACT = [Message.system("Extract memories as JSON."), Message.user("I like tea")]


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (ProviderTimeout("slow"), True),
        (MalformedResponse("bad json", body="{"), True),
        (ProviderError("dropped"), True),
        (ProviderError("x", status=500), True),
        (ProviderError("x", status=503), True),
        (ProviderError("x", status=429), True),
        (ProviderError("x", status=408), True),
        (ProviderError("x", status=400), False),
        (ProviderError("x", status=401), False),
        (ProviderError("x", status=404), False),
        (InputError("x"), False),
        (RuntimeError("x"), False),
    ],
)
def test_is_retryable(error: BaseException, retryable: bool) -> None:
    assert is_retryable(error) is retryable


async def test_retry_once_recovers_from_a_malformed_reply(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.malformed_json(), {"memories": []})
    retried: list[tuple[int, str]] = []
    async with server.chat_model() as model:
        data = await with_retry(
            lambda: model.complete_json(EXTRACT),
            attempts=2,
            on_retry=lambda attempt, exc: retried.append((attempt, type(exc).__name__)),
        )
    assert data == {"memories": []}
    assert retried == [(1, "MalformedResponse")] and len(server.requests) == 2


async def test_retry_recovers_from_5xx_timeouts_and_drops(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.error(503, "busy"), Reply.text("slow").after(5.0), Reply.dropped(), "finally")
    async with server.chat_model() as model:
        reply = await with_retry(lambda: model.complete(EXTRACT, timeout=1.0), attempts=4)
    assert reply.text == "finally" and len(server.requests) == 4


async def test_the_last_failure_propagates_when_attempts_run_out(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.error(500, "first"), Reply.error(500, "second"), "never reached")
    async with server.chat_model() as model:
        with pytest.raises(ProviderError, match="second") as info:
            await with_retry(lambda: model.complete(EXTRACT), attempts=2)
    assert info.value.status == 500 and server.pending("gpt-4o-mini") == 1


async def test_client_errors_are_not_retried(server: ScriptedOpenAIServer) -> None:
    server.script("gpt-4o-mini", Reply.error(400, "bad parameter"), "never reached")
    async with server.chat_model() as model:
        with pytest.raises(ProviderError, match="bad parameter"):
            await with_retry(lambda: model.complete(EXTRACT), attempts=3)
    assert len(server.requests) == 1


async def test_on_accepts_exception_types() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ProviderTimeout("slow")
        return "done"

    assert await with_retry(flaky, attempts=3, on=ProviderTimeout) == "done" and calls == 3
    calls = 0
    with pytest.raises(ProviderTimeout):
        await with_retry(flaky, attempts=3, on=(MalformedResponse,))
    assert calls == 1


async def test_delays_grow_by_the_backoff_and_are_capped() -> None:
    stamps: list[float] = []

    async def failing() -> None:
        stamps.append(time.perf_counter())
        raise ProviderError("down")

    with pytest.raises(ProviderError):
        await with_retry(failing, attempts=4, delay_s=0.05, backoff=2.0, max_delay_s=0.08)
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert len(gaps) == 3
    assert gaps[0] >= 0.045 and gaps[1] >= 0.075 and gaps[2] >= 0.075  # 0.05, then 0.1 capped to 0.08 twice
    assert gaps[2] < 0.5


async def test_attempts_must_be_positive() -> None:
    async def never() -> None:
        raise AssertionError("not called")

    with pytest.raises(ConfigError, match="at least 1"):
        await with_retry(never, attempts=0)
