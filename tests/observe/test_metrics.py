"""``GET /metrics`` on a real server after a real chat turn: the turn's stage histogram, the model token counters,
request latency by route template, queue depths; and who may scrape."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer

from .conftest import CHAT_TOKENS, CLASSIFIER_TOKENS, METRICS_TOKEN, Models, Rig, config_for


def _scrape(rig: Rig) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with rig.client(METRICS_TOKEN) as scraper:
        answer = scraper.get("/metrics")
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }


def _value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_chat_turn_shows_in_the_stage_histograms_and_the_token_counters(rig: Rig) -> None:
    before = _scrape(rig)
    with rig.client(rig.key_a) as acme:
        turn = acme.post("/v1/chat", json={"user_id": "mia", "message": "I'm allergic to peanuts."})
        assert turn.status_code == 200, turn.text
        assert acme.get("/v1/users/mia/memories").status_code == 200
    after = _scrape(rig)

    def grew(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    for stage in ("session", "queue", "embed", "recall", "guard", "assemble", "model", "write", "detection"):
        assert grew("memstack_turn_stage_duration_seconds_count", stage=stage) == 1, stage
    assert grew("memstack_turn_duration_seconds_count", tenant="acme") == 1
    chat = {"role": "chat", "model": "custom:chat", "tenant": "acme"}
    assert grew("memstack_model_tokens_total", kind="prompt", **chat) == CHAT_TOKENS[0]
    assert grew("memstack_model_tokens_total", kind="completion", **chat) == CHAT_TOKENS[1]
    assert grew("memstack_model_calls_total", outcome="ok", **chat) == 1
    assert grew("memstack_model_cost_usd_total", **chat) == pytest.approx(0.0014)  # 1000 × $1/M + 200 × $2/M
    classifier = {"role": "classifier", "model": "custom:classifier", "tenant": "acme"}
    assert grew("memstack_model_tokens_total", kind="prompt", **classifier) == CLASSIFIER_TOKENS[0]
    assert _value(after, "memstack_model_cost_usd_total", **classifier) == 0  # no price: no cost counted
    # Requests by the route's template and status class, never the raw path with its user id.
    assert grew("memstack_http_request_duration_seconds_count", route="/v1/chat", method="POST", status="2xx") == 1
    listed = {"route": "/v1/users/{user_id}/memories", "method": "GET", "status": "2xx"}
    assert grew("memstack_http_request_duration_seconds_count", **listed) == 1
    assert not any("mia" in value for _, labels in after for _, value in labels)
    queues = {dict(labels)["queue"] for name, labels in after if name == "memstack_queue_depth"}
    assert queues == {"turn_work_active", "turn_work_waiting", "background", "detections"}


def test_only_the_metrics_token_opens_metrics_on_a_server_that_requires_keys(rig: Rig) -> None:
    for key in (None, rig.key_a, "not-the-token"):
        with rig.client(key) as caller:
            refused = caller.get("/metrics")
        assert refused.status_code == 401, key
        assert "METRICS_TOKEN" in refused.json()["error"]["message"]
    with rig.client(METRICS_TOKEN) as scraper:
        assert scraper.get("/metrics").status_code == 200
        assert "/metrics" not in scraper.get("/openapi.json").json()["paths"]


@pytest.fixture(scope="module")
def tokenless(tmp_path_factory: pytest.TempPathFactory, models: Models) -> Iterator[tuple[str, str, str]]:
    """Two servers without a metrics token: one requiring keys (and its key), one local."""
    home: Path = tmp_path_factory.mktemp("tokenless")
    with pytest.MonkeyPatch.context() as env:
        config = config_for(home, models, env)

        async def key() -> str:
            from memstack.engine import AsyncMemstack

            async with AsyncMemstack(config) as ms:
                return (await ms.store.keys.create("acme"))[1]

        secret = asyncio.run(key())
        keyed = create_app(config, settings=ServerSettings(auth="keys"))
        local = create_app(config, settings=ServerSettings(auth="local"))
        with BackgroundServer(keyed) as a, BackgroundServer(local) as b:
            yield a.url, b.url, secret


def test_without_a_token_only_a_local_server_serves_metrics(tokenless: tuple[str, str, str]) -> None:
    import httpx

    keyed, local, secret = tokenless
    refused = httpx.get(f"{keyed}/metrics", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 403
    assert "MEMSTACK_METRICS_TOKEN" in refused.json()["error"]["message"]
    served = httpx.get(f"{local}/metrics")
    assert served.status_code == 200 and "memstack_queue_depth" in served.text
