"""``memstack users``: a user as a whole, for data access and deletion requests.

``export`` writes everything held about the user as one JSON document (:mod:`memstack.users`, format
``memstack.user-export``) to stdout or ``--output FILE``, read and written a page at a time. ``delete`` erases it
all in one transaction (asking first unless ``--yes``) and prints what was removed per table; ``--json`` makes the
last line one JSON object.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

import click

from memstack.cli._common import echo_json, run_async
from memstack.cli.memories import _engine, _user_options
from memstack.types import UserRecord, UserRef
from memstack.users import SECTIONS, export_document

__all__ = ["users"]


@click.group("users")
def users() -> None:
    """Export or erase everything memstack holds about a user."""


async def _counted(records: AsyncIterator[UserRecord], counts: Counter[str]) -> AsyncIterator[UserRecord]:
    async for record in records:
        counts[SECTIONS[record.kind]] += 1
        yield record


@users.command("export")
@_user_options
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write to FILE, not stdout.")
@click.option("--json", "as_json", is_flag=True, help="With --output: print the summary as one JSON line.")
@run_async
async def export_user(user_id: str, tenant: str, home: Path | None, output: Path | None, as_json: bool) -> None:
    """Everything held about a user as one JSON document: memories (with history), sessions (facts, turn log,
    archived messages), stored contexts, jobs. Vectors are not exported."""
    user = UserRef(user_id, tenant)
    counts: Counter[str] = Counter()
    async with _engine(home, quiet=as_json) as ms:
        pieces = export_document(user, _counted(ms.users.records(user), counts))
        if output is None:
            await _write(pieces, sys.stdout)
            return
        partial = output.with_name(output.name + ".partial")
        with partial.open("w", encoding="utf-8") as out:
            await _write(pieces, out)
        partial.replace(output)  # a file named FILE is always a whole document
    summary = {"user_id": user_id, "tenant": tenant, "output": str(output), **{s: counts[s] for s in SECTIONS.values()}}
    if as_json:
        echo_json(summary)
    else:
        found = ", ".join(f"{counts[s]} {s}" for s in SECTIONS.values())
        click.echo(f"Exported {user_id} ({tenant}) to {output}: {found}.")


async def _write(pieces: AsyncIterator[str], out: IO[str]) -> None:
    async for piece in pieces:
        out.write(piece)
    out.flush()


@users.command("delete")
@_user_options
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON line (the last line).")
@run_async
async def delete_user(user_id: str, tenant: str, home: Path | None, yes: bool, as_json: bool) -> None:
    """Erase everything held about a user in the tenant (memories and their history, sessions, archive, vectors,
    contexts, jobs), in one transaction. This cannot be undone: export first if the data is asked for."""
    if not yes:
        click.confirm(f"Erase everything held about {user_id} ({tenant})? This cannot be undone", abort=True)
    async with _engine(home, quiet=as_json) as ms:
        report = await ms.erase(UserRef(user_id, tenant))
    if as_json:
        echo_json(report.to_dict())
        return
    if report.total == 0:
        click.echo(f"Nothing held about {user_id} ({tenant}); nothing removed.")
        return
    click.echo(f"Erased {user_id} ({tenant}): {report.total} rows.")
    for table, n in report.removed.items():
        if n:
            click.echo(f"  {table}: {n}")
    if report.indexes_dropped:
        click.echo(f"  search indexes dropped: {report.indexes_dropped}")
