"""Tokens and estimated cost per role: in the reply of a turn, and summed per user and per tenant (``usage``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.errors import ConfigError
from memstack.observe import PriceTable, parse_prices
from memstack.observe.prices import Price

from .conftest import CHAT_TOKENS, CLASSIFIER_TOKENS, Models, Rig, config_for


def _roles(rows: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(row["role"]): row for row in rows}


def test_a_reply_and_the_users_usage_report_tokens_and_cost_per_role(rig: Rig) -> None:
    with rig.client(rig.key_a) as acme, rig.client(rig.key_b) as globex:
        turn = acme.post("/v1/chat", json={"user_id": "noor", "message": "I'm allergic to peanuts."})
        assert turn.status_code == 200, turn.text
        usage = turn.json()["usage"]
        assert (usage["prompt_tokens"], usage["completion_tokens"]) == CHAT_TOKENS
        assert usage["cost_usd"] == pytest.approx(0.0014)  # 1000 × $1/M + 200 × $2/M
        roles = _roles(usage["roles"])
        assert roles["chat"] == {
            "role": "chat", "model": "custom:chat", "calls": 1, "errors": 0, "prompt_tokens": 1000,
            "completion_tokens": 200, "total_tokens": 1200, "cost_usd": pytest.approx(0.0014),
        }  # fmt: skip
        classifier = roles["classifier"]  # detection finished within the badge wait: in this reply
        assert (classifier["prompt_tokens"], classifier["completion_tokens"]) == CLASSIFIER_TOKENS
        assert classifier["cost_usd"] is None  # no known price: tokens, and no guessed cost

        mine = acme.get("/v1/users/noor/usage").json()
        assert _roles(mine["models"]).keys() >= {"chat", "classifier"}
        assert _roles(mine["models"])["chat"]["prompt_tokens"] == 1000
        assert mine["cost_usd"] is None  # a sum with an unpriced model is not a total
        assert globex.get("/v1/users/noor/usage").json()["models"] == []  # another tenant's "noor": nothing

        tenant = acme.get("/v1/usage").json()
        assert tenant["tenant"] == "acme" and tenant["since"]
        assert _roles(tenant["models"])["chat"]["calls"] >= 1
        assert globex.get("/v1/usage").json()["models"] == []


def test_a_stream_whose_endpoint_reports_no_tokens_has_no_cost(rig: Rig) -> None:
    """The custom endpoint is not asked for usage in streams: the chat call is counted, its cost unknown, not 0."""
    with rig.client(rig.key_a) as acme:
        body = {"user_id": "otto", "message": "Tell me something.", "stream": True}
        with acme.stream("POST", "/v1/chat", json=body) as response:
            blocks = [b for b in response.read().decode().split("\n\n") if b.startswith("event: done")]
    usage = json.loads(blocks[0].split("\n", 1)[1].removeprefix("data: "))["usage"]
    assert usage["estimated"] is True and usage["cost_usd"] is None
    chat = _roles(usage["roles"])["chat"]
    assert chat["calls"] == 1 and chat["prompt_tokens"] == 0 and chat["cost_usd"] is None


async def test_the_engine_reports_usage_and_forgets_it_with_the_user(tmp_path: Path, models: Models) -> None:
    with pytest.MonkeyPatch.context() as env:
        config = config_for(tmp_path, models, env)
        async with AsyncMemstack(config) as ms:
            result = await ms.chat("ines", "I'm allergic to peanuts.")
            assert result.usage is not None and result.usage.cost_usd == pytest.approx(0.0014)
            await ms.wait_idle(30)
            assert {m.role for m in (await ms.usage("ines")).models} == {"chat", "classifier"}
            await ms.erase("ines")
            assert (await ms.usage("ines")).models == ()


def test_the_price_table_is_overridable_and_refuses_what_is_not_a_price() -> None:
    table = PriceTable(parse_prices("openai:gpt-4o-mini=1/2, ollama:llama3.2=0/0"))
    assert table.cost("openai:gpt-4o-mini", 1_000_000, 500_000) == pytest.approx(2.0)
    assert table.cost("ollama:llama3.2", 10, 10) == 0.0  # free only because it says so
    assert table.cost("openai:gpt-4o", 1_000_000, 0) == pytest.approx(2.5)  # the built-in table
    assert table.price("openai:text-embedding-3-small@512") == Price(0.02, 0.0)
    assert table.cost("custom:mystery", 10, 10) is None
    for bad in ("gpt-4o", "gpt-4o=1", "gpt-4o=a/b", "=1/2", "gpt-4o=-1/2", "gpt-4o=nan/1"):
        with pytest.raises(ConfigError, match=r"MODEL=INPUT/OUTPUT|finite"):
            parse_prices(bad)


async def test_a_malformed_price_setting_stops_the_engine_naming_the_variable(tmp_path: Path) -> None:
    config = Config.resolve(home=tmp_path, embedder="hash:64", model_prices="gpt-4o=cheap")
    with pytest.raises(ConfigError, match=r"MEMSTACK_MODEL_PRICES"):
        async with AsyncMemstack(config):
            pass
