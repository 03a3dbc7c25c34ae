"""``memstack webhooks`` end to end through click, on a temporary data directory, with a real receiver: create (the
secret printed once), list, a change delivered by ``deliver``, the deliveries table, replay, a refused URL as one
line, update and delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstack.cli import main

from .receiver import Receiver


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    env = {"MEMSTACK_HOME": str(tmp_path / "home"), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "200"}

    def invoke(*args: str) -> Result:
        return runner.invoke(main, list(args), env=env)

    return invoke


def test_the_webhook_commands(cli, receiver: Receiver) -> None:  # type: ignore[no-untyped-def]
    created = cli("webhooks", "create", receiver.url, "--event", "memory.created", "--json")
    assert created.exit_code == 0, created.output
    endpoint = json.loads(created.stdout)
    receiver.secret = endpoint["secret"]
    listed = cli("webhooks", "list", "--json")
    assert [(e["id"], "secret" in e) for e in json.loads(listed.stdout)] == [(endpoint["id"], False)]
    assert cli("memories", "add", "--user", "ana", "I paint on Fridays").exit_code == 0
    sent = cli("webhooks", "deliver")
    assert sent.exit_code == 0 and "Attempted 1 delivery" in sent.output
    (got,) = receiver.events()
    assert got.verified and got.event["data"]["memory"]["content"] == "I paint on Fridays"
    table = cli("webhooks", "deliveries", endpoint["id"])
    assert "memory.created" in table.output and "delivered" in table.output
    (delivery,) = json.loads(cli("webhooks", "deliveries", endpoint["id"], "--json").stdout)
    replayed = cli("webhooks", "replay", delivery["id"])
    assert replayed.exit_code == 0 and f"Replayed {delivery['event_id']}" in replayed.output
    assert "delivered" in replayed.output and len(receiver.events()) == 2
    refused = cli("webhooks", "create", "ftp://example.com/hook")
    assert refused.exit_code == 1 and "must start with https:// or http://" in refused.output
    assert "Traceback" not in refused.output
    disabled = cli("webhooks", "update", endpoint["id"], "--disable")
    assert disabled.exit_code == 0 and "disabled" in disabled.output
    assert cli("webhooks", "delete", endpoint["id"]).exit_code == 0
    assert "No webhooks" in cli("webhooks", "list").output
