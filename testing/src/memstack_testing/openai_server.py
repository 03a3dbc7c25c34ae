"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted replies and faults, for tests.

It runs in a background thread with its own event loop, so the same server serves async tests, sync code and the
official ``openai`` SDK alike. Nothing is mocked: clients speak HTTP/1.1 to a socket.

Quick start::

    from memstack.models import Message
    from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

    async with ScriptedOpenAIServer() as server:           # `with ScriptedOpenAIServer() as server:` in sync code
        server.script("gpt-4o-mini", "Hello!", {"memories": []})
        async with server.chat_model("gpt-4o-mini") as model:  # memstack's client pointed at server.base_url
            assert (await model.complete([Message.user("hi")])).text == "Hello!"
            assert await model.complete_json([Message.user("extract")]) == {"memories": []}
        assert server.requests[0].last_user_message == "hi"

Scripts: ``server.script(model, *replies)`` queues replies for one model (``"*"``: any model); each request takes the
next one. A reply is a ``Reply``, a ``str`` (text), a ``dict`` (a JSON object as the content) or a function::

    Reply.text("hi")                                   Reply.json({"memories": []})
    Reply.tool_call("recall_memory", {"query": "x"})   Reply.calling(ScriptedToolCall(...), ...)
    Reply.malformed_json()                             Reply.error(500, "boom")   Reply.error(429, headers=...)
    Reply.dropped()                                    Reply.text("late").after(2.0)   # delay before answering
    Reply.raw("<html>502</html>", status=200)          # any body, e.g. a proxy's page where JSON was expected
    Reply.text("long answer", drop_after_chunks=3)     # a stream that breaks after 3 SSE events

Function hook (like pydantic-ai's ``FunctionModel``): ``server.handle(fn, model="*")`` answers every request for that
model once its queue is empty; ``fn(request)`` (sync or async) returns a reply. A function may also sit in a queue
and answer one request. An exception in a function becomes an HTTP 500 and is raised again when the server stops.
Unscripted requests get HTTP 500 naming the model (or ``default=`` if given).

Records: ``server.requests`` lists every request (``.path``, ``.body``, ``.model``, ``.messages``, ``.tools``,
``.stream``, ``.text``, ``.last_user_message``); ``await server.wait_for_requests(n)`` waits for background calls.

Embeddings: ``POST /v1/embeddings`` returns deterministic word-hashing vectors (``embedding_dim``, or the request's
``dimensions``; float or base64), not unit length, so clients must normalise. ``server.script_embeddings(*faults)``
queues errors, drops or delays for it. ``GET /v1/models`` lists the configured and scripted model names.

A pytest fixture::

    @pytest.fixture
    def openai_server() -> Iterator[ScriptedOpenAIServer]:
        with ScriptedOpenAIServer() as server:
            yield server
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias

import h11

from memstack.errors import InputError
from memstack_testing._openai_wire import (
    Exchange,
    completion_body,
    embeddings_body,
    error_body,
    model_row,
    read_request,
    stream_events,
)

if TYPE_CHECKING:
    from memstack.embed.remote import OpenAIEmbedder
    from memstack.models.openai_compat import OpenAIChatModel

__all__ = ["RecordedRequest", "Reply", "ScriptedOpenAIServer", "ScriptedToolCall"]

logger = logging.getLogger(__name__)

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class ScriptedToolCall:
    """A tool call to send; ``arguments`` is the raw JSON text, so it can be deliberately malformed."""

    name: str
    arguments: str = "{}"
    id: str = field(default_factory=lambda: f"call_{next(_ids)}")

    def wire(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True, slots=True)
class Reply:
    """What the server answers to one request: content and/or tool calls, or a fault."""

    content: str | None = None
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"; "" sends null
    status: int = 200
    body: str | None = None  # a raw response body, sent as it is instead of a completion
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait before answering (timeouts, races)
    chunk_delay_s: float = 0.0  # wait between stream events
    drop: bool = False  # close the connection without answering
    drop_after_chunks: int | None = None  # stream: close the connection after this many events
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens); default: word counts

    @classmethod
    def text(cls, content: str, **options: Any) -> Reply:
        return cls(content=content, **options)

    @classmethod
    def json(cls, value: Mapping[str, Any] | list[Any], **options: Any) -> Reply:
        return cls(content=json.dumps(value), **options)

    @classmethod
    def malformed_json(cls, content: str = '{"memories": [{"content": "likes tea", ', **options: Any) -> Reply:
        """Content that is cut-off JSON, as a model hitting its token limit would send."""
        return cls(content=content, **options)

    @classmethod
    def tool_call(
        cls, name: str, arguments: Mapping[str, Any] | str = "{}", *, id: str | None = None, **options: Any
    ) -> Reply:
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = ScriptedToolCall(name, raw) if id is None else ScriptedToolCall(name, raw, id)
        return cls(tool_calls=(call,), **options)

    @classmethod
    def calling(cls, *calls: ScriptedToolCall, content: str | None = None, **options: Any) -> Reply:
        """Several tool calls in one reply (optionally with text)."""
        return cls(content=content, tool_calls=calls, **options)

    @classmethod
    def error(cls, status: int, message: str = "scripted failure", *, body: str | None = None, **options: Any) -> Reply:
        """An HTTP error; the body is an OpenAI error object with ``message`` unless ``body`` gives it raw."""
        if status < 400:
            raise InputError(f"an error reply needs a 4xx/5xx status, got {status}; use Reply.text for a success")
        raw = body if body is not None else error_body(status, message)
        return cls(status=status, body=raw, **options)

    @classmethod
    def raw(cls, body: str, status: int = 200, **options: Any) -> Reply:
        """Any body with any status, e.g. HTML from a proxy where JSON was expected."""
        return cls(status=status, body=body, **options)

    @classmethod
    def dropped(cls, **options: Any) -> Reply:
        return cls(drop=True, **options)

    def after(self, seconds: float) -> Reply:
        """The same reply, sent ``seconds`` later."""
        return replace(self, delay_s=seconds)

    @property
    def finish(self) -> str | None:
        if self.finish_reason is not None:
            return self.finish_reason or None
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw: bytes = field(repr=False, default=b"")

    def _get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default) if isinstance(self.body, dict) else default

    @property
    def model(self) -> str | None:
        value = self._get("model")
        return value if isinstance(value, str) else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self._get("messages") or [])

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self._get("tools") or [])

    @property
    def stream(self) -> bool:
        return bool(self._get("stream", False))

    @property
    def response_format(self) -> dict[str, Any] | None:
        value = self._get("response_format")
        return value if isinstance(value, dict) else None

    @property
    def text(self) -> str:
        """Every message's text content, one per line: for ``assert "..." in request.text``."""
        return "\n".join(_content_text(m.get("content")) for m in self.messages if isinstance(m, dict))

    @property
    def last_user_message(self) -> str | None:
        users = [m for m in self.messages if isinstance(m, dict) and m.get("role") == "user"]
        return _content_text(users[-1].get("content")) if users else None


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


ReplyLike: TypeAlias = "Reply | str | Mapping[str, Any]"
Handler: TypeAlias = Callable[[RecordedRequest], "ReplyLike | Awaitable[ReplyLike]"]


def _coerce(value: Any) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    if isinstance(value, Mapping):
        return Reply.json(dict(value))
    raise InputError(f"a scripted reply must be a Reply, str or dict, got {type(value).__name__}")


class ScriptedOpenAIServer:
    """See the module docstring. ``api_key``: when set, requests without ``Bearer <api_key>`` get HTTP 401."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        embedding_dim: int = 64,
        api_key: str | None = None,
        models: tuple[str, ...] = (),
        default: ReplyLike | Handler | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.embedding_dim = embedding_dim
        self.api_key = api_key
        self._models = models
        self._default = default
        self._lock = threading.Lock()
        self._queues: dict[str, deque[ReplyLike | Handler]] = {}
        self._handlers: dict[str, Handler] = {}
        self._embedding_faults: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self.handler_errors: list[BaseException] = []
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- scripting -------------------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: what to give an OpenAI client as ``base_url``."""
        return f"http://{self.host}:{self.port}/v1"

    def script(self, model: str, *replies: ReplyLike | Handler) -> ScriptedOpenAIServer:
        """Queue replies for ``model`` (``"*"``: any model without its own queue), answered in order."""
        with self._lock:
            self._queues.setdefault(model, deque()).extend(replies)
        return self

    def handle(self, handler: Handler, model: str = "*") -> ScriptedOpenAIServer:
        """Answer ``model``'s requests with ``handler(request)`` whenever its queue is empty."""
        with self._lock:
            self._handlers[model] = handler
        return self

    def script_embeddings(self, *faults: Reply) -> ScriptedOpenAIServer:
        """Queue faults (errors, drops, delays) for the next embedding requests; then vectors flow again."""
        with self._lock:
            self._embedding_faults.extend(faults)
        return self

    def pending(self, model: str | None = None) -> int:
        """Scripted replies not yet consumed (for one model, or all)."""
        with self._lock:
            if model is not None:
                return len(self._queues.get(model, ()))
            return sum(len(q) for q in self._queues.values())

    def reset(self) -> None:
        """Forget scripts, handlers, faults, records and handler errors."""
        with self._lock:
            self._queues.clear()
            self._handlers.clear()
            self._embedding_faults.clear()
            self._requests.clear()
            self.handler_errors.clear()

    # -- records ---------------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    async def wait_for_requests(self, count: int, *, timeout: float = 5.0) -> list[RecordedRequest]:
        """Wait until at least ``count`` requests arrived (for calls made by background work)."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"expected {count} requests within {timeout}s, got {len(self.requests)}")
            await asyncio.sleep(0.005)
        return self.requests

    # -- clients ---------------------------------------------------------------------------------------------

    def chat_model(self, model: str = "gpt-4o-mini", **options: Any) -> OpenAIChatModel:
        """memstack's OpenAI-compatible chat model pointed at this server (``openai:<model>``)."""
        from memstack.models import get_model

        return get_model(f"openai:{model}", base_url=self.base_url, api_key=self.api_key or "sk-scripted", **options)

    def embedder(self, model: str = "text-embedding-3-small", **options: Any) -> OpenAIEmbedder:
        """memstack's remote embedder pointed at this server, with ``embedding_dim``-d vectors."""
        from memstack.embed.remote import OpenAIEmbedder

        options.setdefault("dim", self.embedding_dim)
        return OpenAIEmbedder(model, base_url=self.base_url, api_key=self.api_key or "sk-scripted", **options)

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        if self._thread is not None:
            return self
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(target=self._run, name="scripted-openai-server", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise self._startup_error
        return self

    def stop(self) -> None:
        """Close every connection and the port; raise the first exception a handler function raised, if any."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None or loop is None or stopping is None:
            return
        loop.call_soon_threadsafe(stopping.set)
        thread.join()
        self._thread = None
        with self._lock:
            errors, self.handler_errors = self.handler_errors, []
        if errors:
            raise errors[0]

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None:  # the block already failed: let its exception win over a handler's
            with self._lock:
                self.handler_errors.clear()
        self.stop()

    async def __aenter__(self) -> ScriptedOpenAIServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.__exit__, exc_type, exc, tb)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()
            self._ready.set()

    async def _main(self) -> None:
        self._stopping = asyncio.Event()
        try:
            server = await asyncio.start_server(self._connection, self.host, self.port)
        except OSError as exc:
            self._startup_error = exc
            return
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stopping.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await server.wait_closed()

    # -- HTTP ------------------------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                incoming = await read_request(conn, reader)
                if incoming is None:
                    return
                keep_alive = await self._dispatch(Exchange(conn, writer), *incoming)
                if not keep_alive or conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError) as exc:
            logger.debug("scripted server: connection ended: %r", exc)
        except asyncio.CancelledError:  # the server is stopping; end this connection quietly
            logger.debug("scripted server: connection cancelled at shutdown")
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    async def _dispatch(self, ex: Exchange, request: h11.Request, raw: bytes) -> bool:
        method = request.method.decode()
        path = request.target.decode().split("?", 1)[0]
        headers = {name.decode().lower(): value.decode() for name, value in request.headers}
        try:
            body = json.loads(raw) if raw else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        record = RecordedRequest(method, path, headers, body, raw)
        with self._lock:
            self._requests.append(record)
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return await ex.error(401, "Incorrect API key provided (ScriptedOpenAIServer api_key)")
        route = path.removeprefix("/v1")
        if raw and body is None:
            return await ex.error(400, "the request body is not valid JSON")
        if (method, route) == ("POST", "/chat/completions"):
            return await self._chat(ex, record)
        if (method, route) == ("POST", "/embeddings"):
            return await self._embeddings(ex, record)
        if (method, route) == ("GET", "/models"):
            return await ex.json(200, {"object": "list", "data": [model_row(m) for m in self._model_names()]})
        return await ex.error(
            404, f"no route {method} {path}; served: /v1/chat/completions, /v1/embeddings, /v1/models"
        )

    def _model_names(self) -> list[str]:
        with self._lock:
            scripted = set(self._queues) | set(self._handlers)
        return sorted((scripted | set(self._models)) - {"*"})

    async def _next_reply(self, record: RecordedRequest) -> Reply:
        model = record.model or ""
        with self._lock:
            entry: ReplyLike | Handler | None
            queue = self._queues.get(model) or self._queues.get("*")
            handler = self._handlers.get(model) or self._handlers.get("*")
            entry = queue.popleft() if queue else handler or self._default
        if entry is None:
            return Reply.error(
                500, f"ScriptedOpenAIServer has no reply for model {model!r}; call server.script({model!r}, ...)"
            )
        if callable(entry):
            try:
                result = entry(record)
                if inspect.isawaitable(result):
                    result = await result
                return _coerce(result)
            except Exception as exc:
                logger.exception("scripted server: the reply function raised")
                with self._lock:
                    self.handler_errors.append(exc)
                return Reply.error(500, f"the scripted reply function raised {type(exc).__name__}: {exc}")
        return _coerce(entry)

    async def _fault(self, ex: Exchange, reply: Reply) -> bool | None:
        """Apply a reply's delay; answer its drop or error and return keep-alive, or None to go on."""
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.drop:
            return ex.drop()
        if reply.body is not None:
            return await ex.send(reply.status, reply.body.encode(), reply.headers)
        return None

    async def _chat(self, ex: Exchange, record: RecordedRequest) -> bool:
        if not record.model or not record.messages:
            return await ex.error(400, "send a JSON object with 'model' and a non-empty 'messages' list")
        reply = await self._next_reply(record)
        if (answered := await self._fault(ex, reply)) is not None:
            return answered
        completion_id = f"chatcmpl-{next(_ids)}"
        calls = [call.wire() for call in reply.tool_calls]
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:  # word counts stand in for tokens
            prompt = len(record.text.split())
            completion = len((reply.content or "").split()) + sum(len(c.arguments.split()) for c in reply.tool_calls)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        if not record.stream:
            body = completion_body(completion_id, record.model, reply.content, calls, reply.finish, usage)
            return await ex.json(200, body, reply.headers)
        options = record._get("stream_options")
        wants_usage = isinstance(options, dict) and options.get("include_usage")
        events = stream_events(
            completion_id, record.model, reply.content, calls, reply.finish, usage if wants_usage else None
        )
        await ex.start_stream(reply.headers)
        for sent, event in enumerate(events):
            if reply.drop_after_chunks is not None and sent >= reply.drop_after_chunks:
                return ex.drop()
            if reply.chunk_delay_s and sent:
                await asyncio.sleep(reply.chunk_delay_s)
            await ex.event(json.dumps(event))
        await ex.event("[DONE]")
        return await ex.end()

    async def _embeddings(self, ex: Exchange, record: RecordedRequest) -> bool:
        with self._lock:
            fault = self._embedding_faults.popleft() if self._embedding_faults else None
        if fault is not None and (answered := await self._fault(ex, fault)) is not None:
            return answered
        texts = record._get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            return await ex.error(400, "'input' must be a non-empty string or a list of non-empty strings")
        dim = record._get("dimensions") or self.embedding_dim
        if not isinstance(dim, int) or dim < 1:
            return await ex.error(400, "'dimensions' must be a positive integer")
        body = embeddings_body(record.model, texts, dim, as_base64=record._get("encoding_format") == "base64")
        return await ex.json(200, body)
