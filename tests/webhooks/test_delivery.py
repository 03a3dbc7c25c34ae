"""Webhooks end to end, on SQLite and PostgreSQL, against a real receiving HTTP server: every event type arrives
signed (the receiver checks the signature the documented way), a receiver that is down for several attempts (and one
down for a minute of wall time, on a real retry schedule) gets the delivery when it comes back, one that answers 500
forever or never answers ends ``failed`` after the bounded attempts with its error visible, a replay sends the same
event id again, and two workers on one store never send one delivery twice."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memstack.engine import AsyncMemstack
from memstack.errors import InputError, NotFound
from memstack.types import EVENT_TYPES, DeletedBy, DeliveryStatus, HistoryAction, MemoryPatch, UserRef, WebhookDelivery

from .conftest import until
from .receiver import Receiver

ALICE = UserRef("alice", tenant="acme")


async def _endpoint(ms: AsyncMemstack, receiver: Receiver, **kwargs: Any) -> str:
    endpoint = await ms.webhooks.create(receiver.url, tenant="acme", **kwargs)
    assert endpoint.secret is not None and endpoint.secret.startswith("whsec_")
    receiver.secret = endpoint.secret
    return endpoint.id


async def _settled(ms: AsyncMemstack, endpoint: str, timeout_s: float = 20.0) -> list[WebhookDelivery]:
    """The endpoint's deliveries once none is pending."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        found = await ms.webhooks.deliveries(endpoint, tenant="acme")
        if found and all(d.status is not DeliveryStatus.PENDING for d in found):
            return found
        assert asyncio.get_running_loop().time() < deadline, [(d.status, d.attempts, d.last_error) for d in found]
        await asyncio.sleep(0.05)


async def test_every_event_type_is_delivered_signed_with_its_content(open_engine: Any, receiver: Receiver) -> None:
    ms = await open_engine()
    endpoint = await _endpoint(ms, receiver)
    memory = await ms.add(ALICE, "I keep bees in the garden")
    await ms.edit(ALICE, memory.id, content="I keep two hives of bees in the garden")
    await ms.store.memories.update(
        ALICE, memory.id, MemoryPatch(content="I gave my hives to a neighbour"),
        (await ms.embedder.embed(["I gave my hives to a neighbour"]))[0], action=HistoryAction.SUPERSEDE,
    )  # fmt: skip
    await ms.forget(ALICE, memory.id)
    await ms.restore(ALICE, memory.id)
    await ms.delete(ALICE, memory.id)
    await ms.chat(ALICE, "Hello there", session_id="s1")
    await ms.end_session(ALICE, "s1")
    await until(receiver, len(EVENT_TYPES) - 1)  # an erasure deletes the user's deliveries, sent or not
    await ms.erase(ALICE)

    received = await until(receiver, len(EVENT_TYPES))
    assert all(r.verified for r in received), "a delivery's signature did not verify"
    by_type = {r.type: r.event for r in received}
    assert set(by_type) == set(EVENT_TYPES)
    assert len({r.event_id for r in received}) == len(received)  # one id per event
    created = by_type["memory.created"]
    assert (created["tenant"], created["user_id"]) == ("acme", "alice")
    assert created["data"]["memory"] == {**created["data"]["memory"], "id": memory.id, "content": memory.content}
    superseded = by_type["memory.superseded"]["data"]
    assert superseded["memory"]["content"] == "I gave my hives to a neighbour"
    assert superseded["previous"]["content"] == "I keep two hives of bees in the garden"
    assert by_type["memory.forgotten"]["data"]["memory"]["is_active"] is False
    assert by_type["memory.deleted"]["data"]["memory"]["id"] == memory.id
    assert by_type["session.ended"]["data"]["session_id"] == "s1"
    erased = by_type["user.erased"]
    assert erased["data"]["user_id"] == "alice" and "bees" not in str(erased) and "hives" not in str(erased)
    headers = received[0].headers
    assert headers["Memstack-Event-Id"] == received[0].event_id
    assert headers["Memstack-Event-Type"] == received[0].type
    # The erasure took alice's earlier deliveries with it (they held what she said): only its own is listed.
    assert [d.type for d in await _settled(ms, endpoint)] == ["user.erased"]


async def test_an_endpoint_receives_only_its_event_types_and_only_its_tenants(
    open_engine: Any, receiver: Receiver
) -> None:
    ms = await open_engine()
    endpoint = await _endpoint(ms, receiver, events=["memory.forgotten"])
    kept = await ms.add(ALICE, "I play the cello")
    await ms.add(UserRef("alice", tenant="globex"), "I play the drums")
    await ms.forget(ALICE, kept.id)
    (only,) = await until(receiver, 1)
    await asyncio.sleep(0.3)
    assert [r.type for r in receiver.events()] == ["memory.forgotten"] and only.event["tenant"] == "acme"
    disabled = await ms.webhooks.update(endpoint, tenant="acme", enabled=False)
    assert disabled.enabled is False and disabled.secret is None
    await ms.restore(ALICE, kept.id)
    await ms.forget(ALICE, kept.id)
    await asyncio.sleep(0.3)
    assert len(receiver.events()) == 1  # a disabled endpoint gets nothing written for it
    with pytest.raises(NotFound):
        await ms.webhooks.get(endpoint, tenant="globex")


async def test_a_receiver_down_for_several_attempts_gets_the_delivery_when_it_comes_back(
    open_engine: Any, receiver: Receiver
) -> None:
    ms = await open_engine(webhook_max_attempts=20)
    endpoint = await _endpoint(ms, receiver)
    receiver.down()
    memory = await ms.add(ALICE, "My sister lives in Ghent")
    deadline = asyncio.get_running_loop().time() + 20
    while (await ms.webhooks.deliveries(endpoint, tenant="acme"))[0].attempts < 4:  # four refused connections
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    (waiting,) = await ms.webhooks.deliveries(endpoint, tenant="acme")
    assert waiting.status is DeliveryStatus.PENDING and waiting.last_error is not None
    assert "could not reach" in waiting.last_error and waiting.next_attempt_at is not None
    receiver.up()
    (got,) = await until(receiver, 1)
    assert got.verified and got.event["data"]["memory"]["id"] == memory.id
    assert int(got.headers["Memstack-Delivery-Attempt"]) >= 5
    (done,) = await _settled(ms, endpoint)
    assert done.status is DeliveryStatus.DELIVERED and done.last_status == 204 and done.delivered_at is not None


async def test_a_receiver_answering_500_forever_ends_failed_after_the_bounded_attempts(
    open_engine: Any, receiver: Receiver
) -> None:
    ms = await open_engine(webhook_max_attempts=4)
    endpoint = await _endpoint(ms, receiver)
    receiver.mode = "fail"
    await ms.add(ALICE, "I am allergic to peanuts")
    (failed,) = await _settled(ms, endpoint)
    assert failed.status is DeliveryStatus.FAILED and failed.attempts == 4 and failed.last_status == 500
    assert failed.last_error == "HTTP 500: database down (gave up after 4 attempts)"
    assert len(receiver.events()) == 4
    await asyncio.sleep(0.5)
    assert len(receiver.events()) == 4  # no attempt after the last
    assert await ms.webhooks.deliveries(endpoint, tenant="acme", status="failed") == [failed]


async def test_a_receiver_that_never_answers_is_an_attempt_timed_out(open_engine: Any, receiver: Receiver) -> None:
    ms = await open_engine(webhook_max_attempts=2, webhook_timeout_s=0.5)
    endpoint = await _endpoint(ms, receiver)
    receiver.mode = "hang"
    await ms.add(ALICE, "I run on Sundays")
    started = asyncio.get_running_loop().time()
    (failed,) = await _settled(ms, endpoint)
    assert asyncio.get_running_loop().time() - started < 10
    assert failed.status is DeliveryStatus.FAILED and failed.attempts == 2 and failed.last_status is None
    assert failed.last_error is not None and failed.last_error.startswith("no answer within 0.5 s")


async def test_a_replay_sends_the_same_event_again(open_engine: Any, receiver: Receiver) -> None:
    ms = await open_engine(webhook_max_attempts=1)
    endpoint = await _endpoint(ms, receiver)
    receiver.mode = "fail"
    await ms.add(ALICE, "I speak Dutch")
    (failed,) = await _settled(ms, endpoint)
    assert failed.status is DeliveryStatus.FAILED
    receiver.mode = "ok"
    replayed = await ms.webhooks.replay(failed.id, tenant="acme")
    assert replayed.id != failed.id and replayed.event_id == failed.event_id
    assert replayed.status is DeliveryStatus.PENDING and replayed.attempts == 0
    first, second = await until(receiver, 2)
    assert first.event_id == second.event_id == failed.event_id and second.verified
    assert first.event == second.event  # the same bytes: only the signature's timestamp is new
    statuses = {d.id: d.status for d in await _settled(ms, endpoint)}
    assert statuses == {failed.id: DeliveryStatus.FAILED, replayed.id: DeliveryStatus.DELIVERED}
    with pytest.raises(NotFound):
        await ms.webhooks.replay(failed.id, tenant="globex")


async def test_two_workers_on_one_store_send_each_delivery_once(open_engine: Any, receiver: Receiver) -> None:
    writer = await open_engine(resume=False)  # no worker of its own
    endpoint = await _endpoint(writer, receiver)
    for i in range(30):
        await writer.add(ALICE, f"Fact number {i} about the garden")
    one, two = await open_engine(resume=False), await open_engine(resume=False)
    deadline = asyncio.get_running_loop().time() + 20
    while len(receiver.events()) < 30:  # both at once, until every delivery went (a failed attempt waits a little)
        await asyncio.gather(one.webhooks.deliver_due(), two.webhooks.deliver_due())
        assert asyncio.get_running_loop().time() < deadline
    received = receiver.events()
    assert len({r.event_id for r in received}) == len(received) == 30
    assert {d.status for d in await _settled(writer, endpoint)} == {DeliveryStatus.DELIVERED}


async def test_deleting_an_endpoint_drops_its_pending_deliveries(open_engine: Any, receiver: Receiver) -> None:
    ms = await open_engine(resume=False)
    endpoint = await _endpoint(ms, receiver)
    await ms.add(ALICE, "I collect stamps")
    await ms.webhooks.delete(endpoint, tenant="acme")
    assert await ms.webhooks.deliver_due() == 0 and await ms.webhooks.list(tenant="acme") == []
    with pytest.raises(NotFound):
        await ms.webhooks.deliveries(endpoint, tenant="acme")
    with pytest.raises(InputError, match="unknown webhook event"):
        await ms.webhooks.create(receiver.url, tenant="acme", events=["memory.eaten"])


async def test_a_refused_change_writes_no_event(open_engine: Any, receiver: Receiver) -> None:
    ms = await open_engine(resume=False)
    endpoint = await _endpoint(ms, receiver)
    memory = await ms.add(ALICE, "I swim in the lake")
    with pytest.raises(InputError, match="only forgotten memories can be restored"):
        await ms.restore(ALICE, memory.id)  # refused inside its transaction, after the memory was read
    await ms.forget(ALICE, memory.id)
    with pytest.raises(InputError, match="already forgotten"):
        await ms.store.memories.forget(ALICE, memory.id, by=DeletedBy.USER)
    with pytest.raises(NotFound):
        await ms.delete(ALICE, "mem_nope")
    types = sorted(d.type for d in await ms.webhooks.deliveries(endpoint, tenant="acme"))
    assert types == ["memory.created", "memory.forgotten"]


async def test_a_session_ended_twice_is_one_event(open_engine: Any, receiver: Receiver) -> None:
    ms = await open_engine(resume=False)
    endpoint = await _endpoint(ms, receiver, events=["session.ended"])
    await ms.chat(ALICE, "Hello there", session_id="s1")
    await ms.end_session(ALICE, "s1")
    await ms.end_session(ALICE, "s1")
    (ended,) = await ms.webhooks.deliveries(endpoint, tenant="acme")
    assert ended.payload["session_id"] == "s1" and ended.user_id == "alice"


@pytest.mark.parametrize("database", ["sqlite"], indirect=True)
async def test_a_receiver_down_for_a_minute_gets_the_delivery_once_when_it_comes_back(
    open_engine: Any, receiver: Receiver
) -> None:
    """A real outage: the receiver refuses connections for a minute of wall time while the worker retries on a real
    (doubling, jittered) schedule; once it is back, the event arrives, once. One backend: the schedule, not the
    store, is what is under test here, and it costs a minute and a half."""
    ms = await open_engine(webhook_backoff_s=1.0, webhook_max_attempts=20)
    endpoint = await _endpoint(ms, receiver)
    receiver.down()
    began = asyncio.get_running_loop().time()
    memory = await ms.add(ALICE, "My brother moved to Utrecht")
    seen: list[int] = []
    while asyncio.get_running_loop().time() - began < 60:
        (waiting,) = await ms.webhooks.deliveries(endpoint, tenant="acme")
        assert waiting.status is DeliveryStatus.PENDING, waiting.last_error  # still trying, not given up
        if not seen or waiting.attempts != seen[-1]:
            seen.append(waiting.attempts)
        await asyncio.sleep(0.5)
    assert 4 <= seen[-1] <= 8, seen  # backing off: 1, 2, 4, 8, 16 … s (times [0.5, 1)), not hammering
    receiver.up()
    (got,) = await until(receiver, 1, timeout_s=70)  # the wait after the last refusal: up to 64 s
    assert got.verified and got.event["data"]["memory"]["id"] == memory.id
    (done,) = await _settled(ms, endpoint)
    assert done.status is DeliveryStatus.DELIVERED and done.attempts == seen[-1] + 1
    await asyncio.sleep(1.0)
    assert len(receiver.events()) == 1  # delivered once
