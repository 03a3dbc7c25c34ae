"""Kill -9 between a change and its delivery (a real process, SIGKILL): the event was committed with the change, so
an engine started afterwards delivers it; the receiver gets it exactly once by event id, whether the killed process
had not yet tried (one request) or was killed while its attempt was in flight (the attempt is made again after the
dead worker's lease lapses: at least once, the same event id)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memstack.types import DeliveryStatus

from .conftest import until
from .receiver import Receiver

WRITER = Path(__file__).with_name("crash_writer.py")


class Writer:
    """The crash writer as a child process."""

    def __init__(self, database: dict[str, Any], mode: str) -> None:
        src = Path(__file__).resolve().parents[2] / "src"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")]))}
        url = database.get("database_url") or "-"
        self.proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(database["home"]), url, mode],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip

    async def written(self) -> str:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 60)
        assert line, f"the writer exited: {self.proc.stderr.read() if self.proc.stderr else ''}"
        return str(json.loads(line)["memory"])

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        assert self.proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("mode", ["written", "sending"])
async def test_killed_between_the_change_and_its_delivery_then_delivered_once_by_event_id(
    open_engine: Any, database: dict[str, Any], receiver: Receiver, mode: str
) -> None:
    setup = await open_engine(resume=False)
    endpoint = await setup.webhooks.create(receiver.url, tenant="acme", events=["memory.created"])
    assert endpoint.secret is not None
    receiver.secret = endpoint.secret
    if mode == "sending":
        receiver.mode = "hang"
    writer = Writer(database, mode)
    try:
        memory_id = await writer.written()
        if mode == "sending":
            await until(receiver, 1)  # the attempt is in flight: the receiver holds it unanswered
        writer.kill()
    finally:
        if writer.proc.returncode is None:
            writer.kill()
    receiver.mode = "ok"
    before = len(receiver.events())
    assert before == (1 if mode == "sending" else 0)

    await open_engine()  # a restarted process: its worker resumes the outbox
    received = await until(receiver, before + 1)
    await asyncio.sleep(1.0)  # and nothing more comes
    received = receiver.events()
    assert len(received) == before + 1
    assert {r.event_id for r in received} == {received[0].event_id}  # one event: a receiver dedups by its id
    assert all(r.verified for r in received) and received[0].event["data"]["memory"]["id"] == memory_id
    (delivery,) = await setup.webhooks.deliveries(endpoint.id, tenant="acme")
    assert delivery.status is DeliveryStatus.DELIVERED and delivery.attempts == 1
