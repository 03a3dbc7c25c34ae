"""The chat model for every OpenAI-compatible endpoint, on the official ``openai`` SDK (``AsyncOpenAI``).

The SDK's own retries are disabled (``max_retries=0``): retry policy is ``memstack.models.with_retry``. Every SDK
or transport failure leaves as a memstack error (``provider_errors``)::

    HTTP 4xx/5xx          → ProviderError(status=..., body=<raw response body>)
    deadline passed       → ProviderTimeout
    cannot connect / drop → ProviderError(status=None), saying what to check
    unparseable answer    → MalformedResponse
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING, Any

from memstack.errors import ConfigError, MalformedResponse, ProviderError, ProviderTimeout
from memstack.models.base import ChatModel, ToolChoice, request_json
from memstack.models.messages import (
    ChatChunk,
    ChatResponse,
    MessageLike,
    ToolCall,
    ToolSpec,
    Usage,
    as_messages,
)
from memstack.models.providers import Endpoint, Provider, resolve_endpoint
from memstack.observe import tracing
from memstack.observe.accounting import current_role, record_model_call

__all__ = ["OpenAIChatModel", "make_client", "provider_errors"]

_TOOL_CHOICE_MODES = ("auto", "none", "required")

_STATUS_HINTS = {
    400: "the endpoint rejected the request; check that this model supports the parameters sent "
    "(tools, response_format, temperature)",
    401: "check the API key",
    403: "check the API key and that it may use this model",
    404: "check the model name and the base URL",
    413: "the request is too large; lower the context budget",
    422: "the endpoint rejected the request; check that this model supports the parameters sent",
    429: "rate limited or out of quota; retry later, lower the concurrency or check the plan",
}


#: Connections one client keeps open at once: every turn waiting on the model holds one, and a server process
#: carries thousands of such turns (the SDK's default of 1,000 would queue the rest behind them).
MAX_CONNECTIONS = 10_000


def make_client(endpoint: Endpoint, timeout: float) -> Any:
    """An ``AsyncOpenAI`` for ``endpoint`` with retries off. Typed ``Any``: SDK overloads differ across versions."""
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - a dependency of the base install
        raise ConfigError("model endpoints need the openai package: pip install memstack") from exc
    # The SDK's own HTTP library (``httpx`` in older releases, ``httpx2`` in newer ones) builds its limits.
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    http = importlib.import_module(base.__module__.split(".")[0])
    limits = http.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=100, keepalive_expiry=5.0)
    return openai.AsyncOpenAI(
        api_key=endpoint.api_key,
        base_url=endpoint.base_url,
        timeout=timeout,
        max_retries=0,
        default_headers=dict(endpoint.headers),
        http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=timeout),
    )


async def _create(client: Any, params: dict[str, Any], deadline: float) -> Any:
    """``client.chat.completions.create(**params, timeout=deadline)`` less the SDK's walk over the request.

    ``create`` passes its arguments through the SDK's request transform (renaming aliased keys, formatting dates
    and files per the typed parameters), which reads type annotations at every level of every message: 3 to 8 ms of
    the event loop for a context of a dozen messages on a 2-core machine, on every model call, the classifier's
    too. What :meth:`OpenAIChatModel._params` builds is already the JSON the endpoint reads (strings, numbers, lists
    and dicts with the API's own keys, nothing aliased), so it is posted as it is, to the same path, with the same
    response types, errors, timeout and authentication as ``create``."""
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    stream = bool(params.get("stream"))
    return await client.post(
        "/chat/completions",
        body=params,
        cast_to=ChatCompletion,
        options={"timeout": deadline, **_security()},
        stream=stream,
        stream_cls=openai.AsyncStream[ChatCompletionChunk],
    )


@cache
def _security() -> dict[str, Any]:
    """What ``create`` says about authentication, in SDK releases that have the option (the bearer key only)."""
    try:
        from openai._types import RequestOptions
    except ImportError:  # pragma: no cover - every supported release has it
        return {}
    return {"security": {"bearer_auth": True}} if "security" in RequestOptions.__annotations__ else {}


def _transport_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """(timeouts, other transport failures) of the HTTP libraries the SDK may use, raised while reading a stream."""
    timeouts: list[type[Exception]] = []
    failures: list[type[Exception]] = []
    for name in ("httpx", "httpx2"):
        module = sys.modules.get(name)
        if module is not None:
            timeouts.append(module.TimeoutException)
            failures.append(module.TransportError)
    return tuple(timeouts), tuple(failures)


def _error_detail(body: object, raw: str) -> str:
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"])[:300]
        if isinstance(error, str):
            return error[:300]
    return raw[:300] or "(empty body)"


@contextmanager
def provider_errors(name: str, endpoint: Endpoint, timeout: float, *, mid_answer: bool = False) -> Iterator[None]:
    """Translate SDK and transport exceptions raised inside the block into memstack errors.

    ``mid_answer``: the block reads an answer already started (a stream), so a broken connection is not a
    configuration problem.
    """
    import openai

    where = f"{name} at {endpoint.base_url}"
    timeouts, transport = _transport_errors()
    timed_out: tuple[type[BaseException], ...] = (openai.APITimeoutError, TimeoutError, *timeouts)
    try:
        yield
    except timed_out as exc:
        raise ProviderTimeout(
            f"{where} did not answer within {timeout:g}s; raise the timeout or check the endpoint's load"
        ) from exc
    except openai.APIStatusError as exc:
        status = exc.status_code
        raw = exc.response.text
        hint = _STATUS_HINTS.get(status, "the endpoint failed; retry later" if status >= 500 else "see the body")
        if status in (401, 403) and endpoint.provider.api_key_env:
            hint += f" (${endpoint.provider.api_key_env} or api_key=)"
        raise ProviderError(
            f"{where} answered HTTP {status}: {_error_detail(exc.body, raw)}; {hint}", status=status, body=raw
        ) from exc
    except openai.APIConnectionError as exc:
        raise _connection_error(where, endpoint, exc.__cause__ or exc, mid_answer) from exc
    except openai.APIResponseValidationError as exc:
        raise MalformedResponse(f"{where} answered in an unexpected shape: {exc.message}", body=str(exc.body)) from exc
    except openai.APIError as exc:  # e.g. an error event inside a stream
        raise ProviderError(
            f"{where} reported an error: {exc.message}", body=json.dumps(exc.body, default=str)
        ) from exc
    except json.JSONDecodeError as exc:
        raise MalformedResponse(
            f"{where} answered with invalid JSON ({exc.msg}); is it an OpenAI-compatible API root?", body=exc.doc[:2000]
        ) from exc
    except transport as exc:
        raise _connection_error(where, endpoint, exc, mid_answer) from exc


def _connection_error(where: str, endpoint: Endpoint, cause: BaseException, mid_answer: bool) -> ProviderError:
    what = f"{type(cause).__name__}: {cause}"
    if mid_answer:
        return ProviderError(f"the connection to {where} broke mid-answer ({what}); retry the call")
    return ProviderError(
        f"no answer from {where}: the connection failed ({what}); check that the server is running and "
        f"reachable at that URL (base_url= or ${endpoint.provider.base_url_env})"
    )


class OpenAIChatModel:
    """A chat model behind any OpenAI-compatible endpoint; see ``memstack.models.get_model`` for model strings.

    ``provider`` names a row of ``PROVIDERS`` (or is one); ``base_url``/``api_key`` override the row and environment.
    ``json_mode`` overrides the row's JSON-mode support. The HTTP client is created on first use and closed by
    ``aclose`` (or ``async with``).
    """

    def __init__(
        self,
        model: str,
        *,
        provider: Provider | str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        json_mode: bool | None = None,
    ) -> None:
        if not model:
            raise ConfigError("a chat model needs a model name, e.g. gpt-4o-mini")
        self.endpoint = resolve_endpoint(provider, base_url=base_url, api_key=api_key, headers=headers)
        self.model = model
        self.timeout = timeout
        self.json_mode = self.endpoint.provider.json_mode if json_mode is None else json_mode
        self._client: Any = None

    @property
    def name(self) -> str:
        return f"{self.endpoint.provider.name}:{self.model}"

    def __repr__(self) -> str:
        return f"OpenAIChatModel({self.name!r}, base_url={self.endpoint.base_url!r})"

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = make_client(self.endpoint, self.timeout)
        return self._client

    async def complete(
        self,
        messages: Sequence[MessageLike],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> ChatResponse:
        params = self._params(messages, tools, tool_choice, response_format, temperature, max_tokens)
        deadline = self.timeout if timeout is None else timeout
        client = self.client  # created (and the SDK imported) before the deadline starts
        started = time.perf_counter()
        with tracing.span("memstack.model", role=current_role(), model=self.name) as span:
            try:
                with provider_errors(self.name, self.endpoint, deadline):
                    async with asyncio.timeout(deadline):
                        completion = await _create(client, params, deadline)
                response = self._response(completion)
            except Exception:
                record_model_call(self.name, error=True, seconds=time.perf_counter() - started)
                raise
            _record(self.name, response.usage, started, span)
        return response

    async def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        tools: Sequence[ToolSpec] | None = None,
        tool_choice: ToolChoice | None = None,
        response_format: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[ChatChunk]:
        params = self._params(messages, tools, tool_choice, response_format, temperature, max_tokens)
        params["stream"] = True
        if self.endpoint.provider.stream_usage:
            params["stream_options"] = {"include_usage": True}
        deadline = self.timeout if timeout is None else timeout
        client = self.client
        started = time.perf_counter()
        try:
            with provider_errors(self.name, self.endpoint, deadline):
                async with asyncio.timeout(deadline):
                    response = await _create(client, params, deadline)
        except Exception:
            record_model_call(self.name, error=True, seconds=time.perf_counter() - started)
            raise
        calls: dict[int, list[str]] = {}  # index -> [id, name, argument fragments...]
        finish: str | None = None
        usage: Usage | None = None
        model = self.model
        try:
            while True:
                with provider_errors(self.name, self.endpoint, deadline, mid_answer=True):
                    try:
                        chunk = await response.__anext__()
                    except StopAsyncIteration:
                        break
                model = getattr(chunk, "model", None) or model
                usage = _usage(getattr(chunk, "usage", None)) or usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = getattr(choice, "finish_reason", None) or finish
                delta = getattr(choice, "delta", None)
                for position, fragment in enumerate(getattr(delta, "tool_calls", None) or ()):
                    index = getattr(fragment, "index", None)
                    entry = calls.setdefault(position if index is None else index, [f"call_{len(calls)}", ""])
                    if getattr(fragment, "id", None):
                        entry[0] = fragment.id
                    function = getattr(fragment, "function", None)
                    if function is not None:
                        entry[1] = getattr(function, "name", None) or entry[1]
                        entry.append(getattr(function, "arguments", None) or "")
                text = getattr(delta, "content", None)
                if text and isinstance(text, str):
                    yield ChatChunk(text=text, model=model)
        except Exception:
            record_model_call(self.name, error=True, seconds=time.perf_counter() - started)
            raise
        finally:
            await response.close()
        if finish is None:
            record_model_call(self.name, error=True, seconds=time.perf_counter() - started)
            raise MalformedResponse(f"the stream from {self.name} ended before the model finished; retry the call")
        _record(self.name, usage, started, None)
        tool_calls = tuple(ToolCall.parse(e[0], e[1], "".join(e[2:])) for _, e in sorted(calls.items()))
        yield ChatChunk(tool_calls=tool_calls, finish_reason=finish, usage=usage, model=model)

    async def complete_json(
        self,
        messages: Sequence[MessageLike],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        return await request_json(self, messages, temperature=temperature, max_tokens=max_tokens, timeout=timeout)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def _params(
        self,
        messages: Sequence[MessageLike],
        tools: Sequence[ToolSpec] | None,
        tool_choice: ToolChoice | None,
        response_format: Mapping[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": [m.to_openai() for m in as_messages(messages)]}
        if tools:
            params["tools"] = [tool.to_openai() for tool in tools]
        if tool_choice is not None:
            params["tool_choice"] = (
                tool_choice
                if tool_choice in _TOOL_CHOICE_MODES
                else {"type": "function", "function": {"name": tool_choice}}
            )
        if response_format is not None and (self.json_mode or response_format.get("type") != "json_object"):
            params["response_format"] = dict(response_format)
        if temperature is not None:
            params["temperature"] = temperature
        if max_tokens is not None:
            params[self.endpoint.provider.max_tokens_param] = max_tokens
        return params

    def _response(self, completion: Any) -> ChatResponse:
        choices = getattr(completion, "choices", None)
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if message is None or not (content is None or isinstance(content, str)):
            raise MalformedResponse(
                f"{self.name} at {self.endpoint.base_url} did not answer with an OpenAI chat completion; check that "
                "the base URL is the API root (it usually ends in /v1)",
                body=_preview(completion),
            )
        tool_calls = tuple(
            ToolCall.parse(
                str(getattr(call, "id", "") or f"call_{i}"), str(call.function.name), call.function.arguments
            )
            for i, call in enumerate(getattr(message, "tool_calls", None) or ())
            if getattr(call, "function", None) is not None
        )
        return ChatResponse(
            text=content or "",
            tool_calls=tool_calls,
            finish_reason=getattr(choice, "finish_reason", None),
            usage=_usage(getattr(completion, "usage", None)),
            model=getattr(completion, "model", None) or self.model,
        )


if TYPE_CHECKING:  # mypy proves the class satisfies the protocol
    _protocol_check: type[ChatModel] = OpenAIChatModel


def _preview(value: Any) -> str:
    dump = getattr(value, "model_dump_json", None)
    return str(dump(warnings=False) if callable(dump) else value)[:2000]


def _record(name: str, usage: Usage | None, started: float, span: Any) -> None:
    """Count a call that answered (:mod:`memstack.observe`): its tokens as reported (none: 0, an endpoint that
    reports no usage) and, on its span, the same."""
    prompt, completion = (usage.prompt_tokens, usage.completion_tokens) if usage is not None else (0, 0)
    record_model_call(name, prompt, completion, reported=usage is not None, seconds=time.perf_counter() - started)
    if span is not None:
        span.set_attribute("memstack.prompt_tokens", prompt)
        span.set_attribute("memstack.completion_tokens", completion)


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    return Usage(
        prompt_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
    )
