"""OpenTelemetry traces (the SDK's in-memory exporter): a turn's span with a child per stage, and spans for the
work it starts (detection, phase 2) and for every model call, under the turn."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memstack.engine import AsyncMemstack
from memstack.observe import tracing

from .conftest import Models, config_for


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracing.use(provider)
    try:
        yield spans
    finally:
        tracing.use(None)
        provider.shutdown()


def _children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    own = parent.context.span_id
    return [s for s in spans if s.parent is not None and s.parent.span_id == own]


async def test_a_turn_has_a_span_per_stage_and_its_background_work_under_it(
    tmp_path: Path, models: Models, exporter: InMemorySpanExporter
) -> None:
    with pytest.MonkeyPatch.context() as env:
        async with AsyncMemstack(config_for(tmp_path, models, env)) as ms:
            result = await ms.chat("lena", "I'm allergic to peanuts.")
            assert await ms.wait_idle(30)
    spans = exporter.get_finished_spans()
    turns = [s for s in spans if s.name == "memstack.turn"]
    assert len(turns) == 1
    turn = turns[0]
    assert turn.attributes is not None and turn.attributes["memstack.tenant"] == "default"
    assert "lena" not in str(dict(turn.attributes))  # no user id, no words of theirs

    assert result.manifest is not None and result.manifest.timings is not None
    timed = {stage for stage, ms in result.manifest.timings.stages().items() if ms > 0}
    assert {"embed", "recall", "guard", "assemble", "model", "write", "detection"} <= timed
    under = _children(spans, turn)
    stages = {s.name.removeprefix("memstack.stage.") for s in under if s.name.startswith("memstack.stage.")}
    assert stages == timed  # one span per stage the turn went through, from its own timings
    for stage in (s for s in under if s.name.startswith("memstack.stage.")):
        assert turn.start_time is not None and turn.end_time is not None
        assert stage.start_time is not None and stage.end_time is not None
        assert turn.start_time <= stage.start_time <= stage.end_time <= turn.end_time

    names = {s.name for s in under}
    assert {"memstack.detection", "memstack.phase2", "memstack.model"} <= names
    calls = {str((s.attributes or {})["memstack.role"]): s for s in under if s.name == "memstack.model"}
    assert calls.keys() == {"chat", "classifier"}  # the detection's call too: the turn's account carries its trace
    assert (calls["chat"].attributes or {})["memstack.prompt_tokens"] == 1000
    assert (calls["classifier"].attributes or {})["memstack.model"] == "custom:classifier"


async def test_traces_are_off_unless_configured(tmp_path: Path, models: Models) -> None:
    assert not tracing.enabled()
    with pytest.MonkeyPatch.context() as env:
        env.delenv("MEMSTACK_OTEL_ENDPOINT", raising=False)
        env.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
        env.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
        async with AsyncMemstack(config_for(tmp_path, models, env)) as ms:
            await ms.chat("lena", "Hello there.")
    assert not tracing.enabled()
    assert tracing.start_turn(tenant="x") is None


async def test_an_otlp_endpoint_in_the_environment_receives_the_turns_spans(tmp_path: Path, models: Models) -> None:
    """``$MEMSTACK_OTEL_ENDPOINT`` alone turns traces on; the spans reach a real OTLP/HTTP receiver."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append((self.path, self.rfile.read(int(self.headers.get("content-length", "0")))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("MEMSTACK_OTEL_ENDPOINT", f"http://127.0.0.1:{collector.server_address[1]}")
            try:
                async with AsyncMemstack(config_for(tmp_path, models, env)) as ms:
                    assert tracing.enabled()
                    await ms.chat("lena", "Hello there.")
                    assert await ms.wait_idle(30)
            finally:
                tracing.use(None)  # shuts the provider down, which sends what is batched
    finally:
        collector.shutdown()
    assert received and {path for path, _ in received} == {"/v1/traces"}
    names = set()
    for _, body in received:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        names |= {s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans}
    assert {"memstack.turn", "memstack.stage.model", "memstack.model"} <= names
