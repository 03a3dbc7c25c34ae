"""OpenTelemetry traces of turns and of the background work they start; off unless configured.

On when, at the engine's open (:func:`from_env`):

- ``$MEMSTACK_OTEL_ENDPOINT`` names an OTLP/HTTP collector (``http://collector:4318``; ``/v1/traces`` is added
  when the URL has no path), or the standard ``$OTEL_EXPORTER_OTLP_ENDPOINT`` /
  ``$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (the exporter reads those, with their headers, itself): memstack
  builds a tracer provider of its own that batches spans to it (service name ``$OTEL_SERVICE_NAME``, else
  ``memstack``; the process's global provider is left to the application);
- or the application already configured the OpenTelemetry SDK itself (a global SDK tracer provider): memstack's
  spans join it.

Both need the ``otel`` extra (``pip install 'memstack[otel]'``: ``opentelemetry-sdk`` and the OTLP exporter); an
endpoint set without it is a :class:`~memstack.errors.MissingExtra` at open. Off, every hook here is one check of a
module global: no import of OpenTelemetry, no span objects. Tests hand in a provider with :func:`use`.

**Spans.** ``memstack.turn`` for each chat turn (attributes: tenant, agent, session, turn number, chat model; never
the user's id or words), with a child per stage, ``memstack.stage.<name>`` (``session``, ``queue``, ``embed``,
``recall``, ``guard``, ``assemble``, ``model``, ``write``, ``detection``). The stage spans are written when the turn
ends, from the turn's own stopwatch (:class:`~memstack.types.TurnTimings`: nothing is timed twice), laid end to end
from the turn's start, each as long as its stage: the timings are pieces of the critical path, not intervals of
their own (the guard runs inside the assembly, the write beside detection), so the layout shows where the time
went rather than exact overlaps. The work a turn starts has spans of its own, children of the turn's:
``memstack.detection`` (memory detection, often ending after the reply), ``memstack.phase2`` (the session's
summarizer), and ``memstack.model`` around every model call (role, model, tokens) wherever it runs.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memstack.errors import MissingExtra
from memstack.observe.accounting import current_account

if TYPE_CHECKING:
    import asyncio

__all__ = ["enabled", "finish_turn", "from_env", "span", "start_turn", "track", "use"]

_tracer: Any = None  # an opentelemetry Tracer while traces are on
_owned: Any = None  # the provider from_env built (shut down by use(None))

ENDPOINT_ENV = "MEMSTACK_OTEL_ENDPOINT"
_STANDARD_ENV = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def enabled() -> bool:
    return _tracer is not None


def use(provider: Any) -> None:
    """Trace to ``provider`` (an OpenTelemetry ``TracerProvider``); ``None`` turns traces off (shutting down a
    provider :func:`from_env` built)."""
    global _tracer, _owned
    if _owned is not None and provider is not _owned:
        _owned.shutdown()
        _owned = None
    _tracer = None if provider is None else provider.get_tracer("memstack")


def from_env() -> bool:
    """Turn traces on if the environment (or the application) configured them; True when on. Once on, stays on."""
    global _owned
    if _tracer is not None:
        return True
    ours = os.environ.get(ENDPOINT_ENV, "").strip()
    standard = any(os.environ.get(name, "").strip() for name in _STANDARD_ENV)
    if not ours and not standard:
        return _join_global()
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        variable = ENDPOINT_ENV if ours else "OTEL_EXPORTER_OTLP_ENDPOINT"
        raise MissingExtra(
            f"tracing (${variable} is set)",
            f"or unset ${variable}",
            package=exc.name or "opentelemetry-sdk",
            install="pip install 'memstack[otel]'",
        ) from None
    exporter = OTLPSpanExporter(endpoint=_traces_url(ours)) if ours else OTLPSpanExporter()
    service = os.environ.get("OTEL_SERVICE_NAME", "").strip() or "memstack"
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    use(provider)
    _owned = provider
    return True


def _join_global() -> bool:
    """The application configured the SDK itself (a global SDK provider): join it. Without the SDK imported,
    nobody configured it: nothing is imported here."""
    if "opentelemetry.sdk.trace" not in sys.modules:
        return False
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if not _is_sdk(provider):
        return False
    use(provider)
    return True


def _is_sdk(provider: Any) -> bool:
    sdk = sys.modules.get("opentelemetry.sdk.trace")
    return sdk is not None and isinstance(provider, sdk.TracerProvider)


def _traces_url(url: str) -> str:
    return url.rstrip("/") + "/v1/traces" if urlsplit(url).path in ("", "/") else url


def start_turn(**attributes: Any) -> Any:
    """The span of a turn that starts now (``None`` while traces are off); end it with :func:`finish_turn`."""
    if _tracer is None:
        return None
    return _tracer.start_span("memstack.turn", attributes=_clean(attributes))


def context_of(turn: Any) -> Any:
    """The context whose parent is ``turn``'s span (what :class:`~memstack.observe.Account` carries)."""
    if turn is None:
        return None
    from opentelemetry import trace

    return trace.set_span_in_context(turn)


def finish_turn(turn: Any, timings: Any = None, error: BaseException | None = None) -> None:
    """End ``turn``'s span now, with a child span per stage of ``timings`` (a ``TurnTimings``) laid end to end from
    the turn's start; an ``error`` marks the span failed."""
    if turn is None or _tracer is None:
        return
    end = time.time_ns()
    if timings is not None:
        start = getattr(turn, "start_time", None) or end - int(timings.total_ms * 1e6)
        at = max(start, end - int(timings.total_ms * 1e6))
        parent = context_of(turn)
        for stage, ms in timings.stages().items():
            if ms <= 0:
                continue
            took = int(ms * 1e6)
            child = _tracer.start_span(
                f"memstack.stage.{stage}", context=parent, start_time=at, attributes={"memstack.stage": stage}
            )
            child.end(end_time=min(at + took, end))
            at += took
    if error is not None:
        _fail(turn, error)
    turn.end(end_time=end)


_OFF: AbstractContextManager[Any] = nullcontext()


def span(name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A span around the block (``None`` is entered while traces are off: one shared no-op context manager),
    current inside it, whose parent is the current span, else the current account's turn; an exception marks it
    failed and propagates."""
    return _OFF if _tracer is None else _span(name, attributes)


@contextmanager
def _span(name: str, attributes: dict[str, Any]) -> Iterator[Any]:
    parent = None
    account = current_account()
    from opentelemetry import trace

    if not trace.get_current_span().get_span_context().is_valid and account is not None:
        parent = account.trace
    with _tracer.start_as_current_span(
        name, context=parent, attributes=_clean(attributes), record_exception=True, set_status_on_exception=True
    ) as current:
        yield current


def track(task: asyncio.Task[Any], name: str, **attributes: Any) -> None:
    """A span from now until ``task`` ends (work that outlives the code starting it, such as a detection)."""
    if _tracer is None:
        return
    account = current_account()
    started = _tracer.start_span(
        name, context=account.trace if account is not None else None, attributes=_clean(attributes)
    )

    def done(finished: asyncio.Task[Any]) -> None:
        if finished.cancelled():
            started.set_attribute("memstack.cancelled", True)
        elif (exc := finished.exception()) is not None:
            _fail(started, exc)
        started.end()

    task.add_done_callback(done)


def _fail(target: Any, exc: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    target.record_exception(exc)
    target.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))


def _clean(attributes: dict[str, Any]) -> dict[str, Any]:
    """OpenTelemetry attributes: ``memstack.``-prefixed, without ``None`` values."""
    return {(k if "." in k else f"memstack.{k}"): v for k, v in attributes.items() if v is not None}
