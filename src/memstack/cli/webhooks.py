"""``memstack webhooks``: a tenant's webhook endpoints and their recent deliveries (``docs/webhooks.md``).

``create`` prints the signing secret, shown only this once. The deliveries themselves are sent by the delivery worker
of every running engine (``memstack serve``, or an application embedding memstack); ``deliver`` sends the ones due
now from this process, for a store no server is running on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.table import Table

from memstack.cli._common import HOME_HELP, clip, echo_json, open_engine, run_async, table_console
from memstack.types import EVENT_TYPES, WebhookDelivery, WebhookEndpoint

__all__ = ["webhooks"]


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)(fn)
    return click.option("--tenant", "-t", default="default", show_default=True, help="Whose endpoints.")(fn)


def _endpoint_json(e: WebhookEndpoint) -> dict[str, Any]:
    out = {
        "id": e.id, "tenant": e.tenant, "url": e.url, "events": list(e.events), "enabled": e.enabled,
        "description": e.description, "created_at": e.created_at.isoformat(),
    }  # fmt: skip
    return {**out, "secret": e.secret} if e.secret else out


def _delivery_json(d: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": d.id, "event_id": d.event_id, "type": d.type, "user_id": d.user_id, "status": d.status.value,
        "attempts": d.attempts, "last_status": d.last_status, "last_error": d.last_error,
        "occurred_at": d.occurred_at.isoformat(),
        "next_attempt_at": d.next_attempt_at.isoformat() if d.next_attempt_at else None,
        "delivered_at": d.delivered_at.isoformat() if d.delivered_at else None,
    }  # fmt: skip


@click.group("webhooks")
def webhooks() -> None:
    """Send memstack's changes to your HTTP endpoints (signed, retried, at least once)."""


@webhooks.command("create")
@click.argument("url")
@click.option(
    "--event",
    "-e",
    "events",
    multiple=True,
    type=click.Choice(EVENT_TYPES),
    help="An event type (repeat; default all).",
)
@click.option("--description", "-d", default="", help="A note to recognise the endpoint by.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object (with the secret).")
@_common
@run_async
async def create(
    url: str, events: tuple[str, ...], description: str, as_json: bool, tenant: str, home: Path | None
) -> None:
    """Add an endpoint and print its signing secret (shown only this once)."""
    async with open_engine(home, quiet=as_json) as ms:
        e = await ms.webhooks.create(url, events=events or None, tenant=tenant, description=description)
    if as_json:
        echo_json(_endpoint_json(e))
        return
    click.echo(f"Created {e.id} for tenant {e.tenant!r} ({', '.join(e.events)}).")
    click.echo(f"Signing secret, shown only once; store it with your receiver:\n\n    {e.secret}\n")


@webhooks.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@_common
@run_async
async def list_endpoints(as_json: bool, tenant: str, home: Path | None) -> None:
    """List the tenant's endpoints (never their secrets)."""
    async with open_engine(home, quiet=as_json) as ms:
        found = await ms.webhooks.list(tenant=tenant)
    if as_json:
        echo_json([_endpoint_json(e) for e in found])
        return
    if not found:
        click.echo("No webhooks. Add one with: memstack webhooks create https://example.com/hook")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "url", "events", "enabled"):
        table.add_column(column, no_wrap=column == "id", overflow="fold")
    for e in found:
        events = "all" if set(e.events) == set(EVENT_TYPES) else ", ".join(e.events)
        table.add_row(e.id, e.url, events, "yes" if e.enabled else "no")
    table_console().print(table)


@webhooks.command("update")
@click.argument("webhook_id")
@click.option("--url", help="A new URL.")
@click.option("--event", "-e", "events", multiple=True, type=click.Choice(EVENT_TYPES), help="Event types (repeat).")
@click.option("--enable/--disable", "enabled", default=None, help="Start or stop writing deliveries for it.")
@_common
@run_async
async def update(
    webhook_id: str, url: str | None, events: tuple[str, ...], enabled: bool | None, tenant: str, home: Path | None
) -> None:
    """Change an endpoint's URL, event types or state."""
    async with open_engine(home) as ms:
        e = await ms.webhooks.update(webhook_id, tenant=tenant, url=url, events=events or None, enabled=enabled)
    click.echo(f"Updated {e.id}: {e.url} ({'enabled' if e.enabled else 'disabled'}; {', '.join(e.events)}).")


@webhooks.command("delete")
@click.argument("webhook_id")
@_common
@run_async
async def delete(webhook_id: str, tenant: str, home: Path | None) -> None:
    """Delete an endpoint and its deliveries (pending ones are not sent)."""
    async with open_engine(home) as ms:
        await ms.webhooks.delete(webhook_id, tenant=tenant)
    click.echo(f"Deleted {webhook_id}.")


@webhooks.command("deliveries")
@click.argument("webhook_id")
@click.option("--status", type=click.Choice(["pending", "delivered", "failed"]), help="Only these.")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(1, 500))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@_common
@run_async
async def deliveries(
    webhook_id: str, status: str | None, limit: int, as_json: bool, tenant: str, home: Path | None
) -> None:
    """An endpoint's recent deliveries: status, attempts, last error."""
    async with open_engine(home, quiet=as_json) as ms:
        found = await ms.webhooks.deliveries(webhook_id, tenant=tenant, status=status, limit=limit)
    if as_json:
        echo_json([_delivery_json(d) for d in found])
        return
    if not found:
        click.echo("No deliveries yet.")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("delivery", "event", "user", "status", "attempts", "last error"):
        table.add_column(column, no_wrap=column != "last error", overflow="fold")
    for d in found:
        error = clip(d.last_error or "", limit=80)
        table.add_row(d.id, d.type, d.user_id, d.status.value, str(d.attempts), error)
    table_console().print(table)


@webhooks.command("replay")
@click.argument("delivery_id")
@_common
@run_async
async def replay(delivery_id: str, tenant: str, home: Path | None) -> None:
    """Send a delivery's event again (same event id), as a new delivery."""
    async with open_engine(home) as ms:
        d = await ms.webhooks.replay(delivery_id, tenant=tenant)
        await ms.webhooks.deliver_due()
        (now,) = [x for x in await ms.webhooks.deliveries(d.endpoint_id, tenant=tenant, limit=50) if x.id == d.id]
    click.echo(
        f"Replayed {d.event_id} as {d.id}: {now.status.value}" + (f" ({now.last_error})" if now.last_error else "")
    )


@webhooks.command("deliver")
@_common
@run_async
async def deliver(tenant: str, home: Path | None) -> None:
    """Send the deliveries due now from this process (when no server is running on this store)."""
    async with open_engine(home) as ms:
        sent = 0
        while attempted := await ms.webhooks.deliver_due():
            sent += attempted
    click.echo(f"Attempted {sent} deliver{'y' if sent == 1 else 'ies'}.")
