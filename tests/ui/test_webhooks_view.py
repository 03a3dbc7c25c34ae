"""The Webhooks view in Chromium: an operator adds an endpoint (its secret shown once), sees a delivery failing with
the receiver's error, replays it once the receiver is fixed and sees it delivered, and deletes the endpoint; the
view needs no user chosen (endpoints are the tenant's) and fits a phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from webhooks.receiver import Receiver

from .conftest import PHONE, Served, assert_fits, user_id


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _refresh_until(page: Page, button: str, row: str, text: str) -> None:
    """Press ``button`` (the deliveries of an endpoint) until ``row`` shows ``text`` (the worker runs meanwhile)."""
    for _ in range(60):
        page.get_by_role("button", name=button).click()
        if text in (page.locator(row).first.text_content(timeout=5_000) or ""):
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"{row} never showed {text!r}")


def test_add_an_endpoint_see_a_failure_replay_it_and_delete(
    page: Page, local_server: Served, receiver: Receiver, request: pytest.FixtureRequest
) -> None:
    page.goto(f"{local_server.url}/#/webhooks")
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    expect(page.locator("#webhook-list")).to_contain_text("No webhooks yet")

    receiver.mode = "fail"
    page.get_by_label("Endpoint URL").fill(receiver.url)
    page.get_by_role("button", name="Add endpoint").click()
    expect(page.locator("#webhook-secret")).to_contain_text("whsec_")
    receiver.secret = (page.locator("#webhook-secret code").text_content() or "").strip()
    expect(page.locator("#webhook-list li.webhook")).to_contain_text(receiver.url)
    expect(page.locator("#delivery-list")).to_contain_text("No deliveries yet.")

    with local_server.api() as api:
        added = api.post(f"/v1/users/{user_id(request)}/memories", json={"content": "I grow tomatoes"})
        assert added.status_code == 201, added.text
    deliveries = f"Deliveries of {receiver.url}"
    _refresh_until(page, deliveries, "#delivery-list li.delivery", "HTTP 500: database down")
    failing = page.locator("#delivery-list li.delivery").first
    expect(failing).to_contain_text("memory.created")
    expect(failing).to_contain_text("pending")  # retried later, with backoff

    receiver.mode = "ok"
    failing.get_by_role("button", name="Replay delivery").click()
    expect(page.locator("#status")).to_contain_text("Replaying memory.created")
    _refresh_until(page, deliveries, "#delivery-list li.delivery", "delivered")
    assert any(r.verified and r.type == "memory.created" for r in receiver.events())

    page.set_viewport_size(PHONE)
    assert_fits(page, "the Webhooks view")
    page.get_by_role("button", name=f"Delete webhook {receiver.url}").click()
    expect(page.locator("#webhook-list")).to_contain_text("No webhooks yet")
