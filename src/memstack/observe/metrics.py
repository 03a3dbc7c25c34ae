"""Prometheus metrics of one process: what ``GET /metrics`` serves (``prometheus-client``, imported only here, when a
server builds its :class:`PrometheusMetrics`, so ``memstack --help`` and the library never import it).

Every label has a bounded set of values, so a scrape stays small however many users, sessions and memories there
are: HTTP routes are the route's template (``/v1/users/{user_id}/memories``, never a raw path: a path the app does
not route is ``unmatched``), statuses are classes (``2xx`` … ``5xx``), stages and roles are fixed lists, and the
two labels whose values come from data, ``tenant`` and ``model`` (an agent may name any model), keep their first
``tenants`` (``models``) values seen and count the rest as ``other`` (:class:`Capped`). ``tenants=0`` drops tenants
from the labels altogether (``all``). Users never appear in a label.

=====================================================  ==========================================================
``memstack_http_request_duration_seconds``             histogram by ``route``, ``method``, ``status`` (class)
``memstack_turn_duration_seconds``                     histogram of whole turns, by ``tenant``
``memstack_turn_stage_duration_seconds``               histogram by ``stage`` (``TurnTimings``: session, queue,
                                                       embed, recall, guard, assemble, model, write, detection)
``memstack_model_calls_total``                         by ``role``, ``model``, ``tenant``, ``outcome`` (ok|error)
``memstack_model_tokens_total``                        by ``role``, ``model``, ``tenant``, ``kind`` (prompt|
                                                       completion)
``memstack_model_cost_usd_total``                      estimated, by ``role``, ``model``, ``tenant`` (priced
                                                       models only: :mod:`memstack.observe.prices`)
``memstack_model_call_duration_seconds``               histogram by ``role``
``memstack_background_jobs_total``                     by ``kind`` (phase2, detection, resume…), ``outcome``
``memstack_queue_depth``                               gauge by ``queue``: ``turn_work_active``,
                                                       ``turn_work_waiting`` (the admission gate), ``background``
                                                       (phase 2 and resumes running), ``detections`` (running)
=====================================================  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from memstack.observe.accounting import ModelCall
from memstack.observe.telemetry import Telemetry
from memstack.types import TurnTimings

__all__ = ["Capped", "PrometheusMetrics", "route_label", "status_class"]

T = TypeVar("T")

#: Seconds: from a fast search (a few ms) to a slow model turn (a minute).
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class Capped:
    """The first ``limit`` distinct values are their own label, later ones ``other``; ``limit`` 0: everything is
    ``all``. Bounded by construction: at most ``limit`` values are remembered."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._seen: set[str] = set()

    def __call__(self, value: str | None) -> str:
        if self._limit <= 0:
            return "all"
        value = value or "none"
        if value in self._seen:
            return value
        if len(self._seen) < self._limit:
            self._seen.add(value)
            return value
        return "other"


def status_class(status: int) -> str:
    return f"{status // 100}xx"


def route_label(route: Any) -> str:
    """The template of the route that answered (Starlette's ``scope["route"]``), ``unmatched`` for none."""
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else "unmatched"


class PrometheusMetrics:
    """The metrics of one process, in their own registry (``registry``), fed by an engine's :class:`Telemetry`
    (:meth:`attach`) and the server's request middleware (:meth:`request`)."""

    def __init__(self, *, tenants: int = 20, models: int = 20, registry: Any = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self._tenant = Capped(tenants)
        self._model = Capped(models)
        self._depths: Callable[[], dict[str, int]] = dict
        r = self.registry
        self._http = Histogram(
            "memstack_http_request_duration_seconds",
            "HTTP requests, by route template, method and status class",
            ["route", "method", "status"],
            buckets=_BUCKETS,
            registry=r,
        )
        self._turn = Histogram(
            "memstack_turn_duration_seconds", "Chat turns, start to reply", ["tenant"], buckets=_BUCKETS, registry=r
        )
        self._stage = Histogram(
            "memstack_turn_stage_duration_seconds",
            "Where chat turns' time went, by stage (memstack.types.TurnTimings)",
            ["stage"],
            buckets=_BUCKETS,
            registry=r,
        )
        self._calls = Counter("memstack_model_calls", "Model calls", ["role", "model", "tenant", "outcome"], registry=r)
        self._tokens = Counter(
            "memstack_model_tokens", "Tokens of model calls", ["role", "model", "tenant", "kind"], registry=r
        )
        self._cost = Counter(
            "memstack_model_cost_usd", "Estimated cost of priced model calls", ["role", "model", "tenant"], registry=r
        )
        self._call_seconds = Histogram(
            "memstack_model_call_duration_seconds", "Model calls, by role", ["role"], buckets=_BUCKETS, registry=r
        )
        self._jobs = Counter(
            "memstack_background_jobs", "Background work finished, by kind and outcome", ["kind", "outcome"], registry=r
        )
        r.register(_Depths(self))

    def attach(self, telemetry: Telemetry) -> None:
        """Count ``telemetry``'s model calls, turns and background work, and read its queue depths at each scrape."""
        telemetry.on_model_call.append(self.model_call)
        telemetry.on_turn.append(self.turn)
        telemetry.on_job.append(self.job)
        self._depths = lambda: telemetry.depths()

    def detach(self, telemetry: Telemetry) -> None:
        _drop(telemetry.on_model_call, self.model_call)
        _drop(telemetry.on_turn, self.turn)
        _drop(telemetry.on_job, self.job)
        self._depths = dict

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        self._http.labels(route, method, status_class(status)).observe(seconds)

    def turn(self, tenant: str, timings: TurnTimings) -> None:
        self._turn.labels(self._tenant(tenant)).observe(timings.total_ms / 1000)
        for stage, ms in timings.stages().items():
            self._stage.labels(stage).observe(ms / 1000)

    def model_call(self, call: ModelCall) -> None:
        model, tenant = self._model(call.model), self._tenant(call.tenant)
        self._calls.labels(call.role, model, tenant, "error" if call.error else "ok").inc()
        if call.prompt_tokens:
            self._tokens.labels(call.role, model, tenant, "prompt").inc(call.prompt_tokens)
        if call.completion_tokens:
            self._tokens.labels(call.role, model, tenant, "completion").inc(call.completion_tokens)
        if call.cost_usd:
            self._cost.labels(call.role, model, tenant).inc(call.cost_usd)
        self._call_seconds.labels(call.role).observe(call.seconds)

    def job(self, kind: str, outcome: str) -> None:
        self._jobs.labels(kind, outcome).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The scrape's body and content type (Prometheus text format)."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def _drop(listeners: list[T], listener: T) -> None:
    if listener in listeners:
        listeners.remove(listener)


class _Depths:
    """``memstack_queue_depth``, read from the engine when scraped (nothing to keep up to date in between)."""

    def __init__(self, owner: PrometheusMetrics) -> None:
        self._owner = owner

    def describe(self) -> Iterable[Any]:
        return ()

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        family = GaugeMetricFamily("memstack_queue_depth", "Work queued or running in this process", labels=["queue"])
        for queue, depth in sorted(self._owner._depths().items()):
            family.add_metric([queue], depth)
        yield family
