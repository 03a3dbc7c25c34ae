"""``memstack keys``: create, list and revoke the API keys of the HTTP server.

A key scopes every request made with it to one tenant. The secret is printed once, by ``create``; the database keeps
only its SHA-256, so a lost key cannot be shown again: revoke it and create another.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.table import Table

from memstack.cli._common import HOME_HELP, echo_json, open_engine, run_async, table_console
from memstack.types import ApiKey

__all__ = ["keys"]


def _home(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)(fn)


def _key_json(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "tenant": key.tenant,
        "name": key.name,
        "prefix": key.prefix,
        "created_at": key.created_at.isoformat(),
        "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
    }


@click.group("keys")
def keys() -> None:
    """Manage the API keys of `memstack serve` (one tenant per key)."""


@keys.command("create")
@click.option("--tenant", "-t", required=True, help="The tenant every request made with this key acts for.")
@click.option("--name", "-n", default="", help="A label to recognise the key by (e.g. 'web backend').")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object (with the secret) instead of text.")
@click.option(
    "--quiet", "-q", is_flag=True, help="Print only the secret, e.g. export MEMSTACK_KEY=$(memstack keys create -q …)."
)
@_home
@run_async
async def create_key(tenant: str, name: str, as_json: bool, quiet: bool, home: Path | None) -> None:
    """Create a key and print its secret (shown only this once)."""
    if as_json and quiet:
        raise click.UsageError("--json and --quiet are two different outputs: choose one")
    async with open_engine(home, quiet=as_json or quiet) as ms:
        key, secret = await ms.keys.create(tenant, name=name)
    if quiet:
        click.echo(secret)
        return
    if as_json:
        echo_json({**_key_json(key), "secret": secret})
        return
    click.echo(f"Created {key.id} for tenant {key.tenant!r}. The secret is shown only once; store it now:\n")
    click.echo(f"    {secret}\n")
    click.echo(f"Use it as: Authorization: Bearer {secret[:12]}…   Revoke with: memstack keys revoke {key.id}")


@keys.command("list")
@click.option("--tenant", "-t", help="Only this tenant's keys.")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked keys.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@_home
@run_async
async def list_keys(tenant: str | None, include_revoked: bool, as_json: bool, home: Path | None) -> None:
    """List keys (never their secrets)."""
    async with open_engine(home, quiet=as_json) as ms:
        found = await ms.keys.list(tenant, include_revoked=include_revoked)
    if as_json:
        echo_json([_key_json(k) for k in found])
        return
    if not found:
        click.echo("No keys. Create one with: memstack keys create --tenant NAME")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True, min_width=max(len(k.id) for k in found), overflow="fold")
    for column in ("tenant", "name", "starts with", "created", "status"):
        table.add_column(column, no_wrap=column != "name")
    for key in found:
        status = "active" if key.active else f"revoked {key.revoked_at:%Y-%m-%d %H:%M}"
        created = key.created_at.astimezone().strftime("%Y-%m-%d %H:%M")
        table.add_row(key.id, key.tenant, key.name, key.prefix + "…", created, status)
    table_console().print(table)


@keys.command("revoke")
@click.argument("key_id")
@_home
@run_async
async def revoke_key(key_id: str, home: Path | None) -> None:
    """Revoke a key by its id (key_…); requests with it get 401 from then on."""
    async with open_engine(home) as ms:
        key = await ms.keys.revoke(key_id)
    click.echo(f"Revoked {key.id} (tenant {key.tenant!r}).")
