"""``memstack users``: a user as a whole, for data access and deletion requests.

``export`` writes everything held about the user as one JSON document (:mod:`memstack.users`, format
``memstack.user-export``) to stdout or ``--output FILE``, read and written a page at a time. ``delete`` erases it
all in one transaction (asking first unless ``--yes``) and prints what was removed per table; ``import`` reads a
user back from an export document (``--from memstack``, the default), or users from mem0's memories (``--from
mem0``) or plain JSONL messages (``--from jsonl``, read a line at a time), and prints what was written per user;
``--json`` makes the last line one JSON object.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

import click

from memstack.cli._common import HOME_HELP, echo_json, run_async
from memstack.cli.memories import _engine, _user_options
from memstack.errors import ImportRefused
from memstack.files import read_text
from memstack.imports import MAX_IMPORT_BYTES
from memstack.types import ImportReport, UserRecord, UserRef
from memstack.users import SECTIONS, export_document

__all__ = ["users"]


@click.group("users")
def users() -> None:
    """Export, import or erase everything memstack holds about a user."""


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


def _read(path: Path, what: str) -> str:
    """A whole file an import parses at once, its size bounded before it is read."""
    if str(path) != "-" and path.is_file() and path.stat().st_size > MAX_IMPORT_BYTES:
        raise ImportRefused(
            f"{path} is more than the {MAX_IMPORT_BYTES} bytes an import reads at once (it is parsed whole); "
            "nothing was imported"
        )
    return read_text(path, what)


@users.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@click.option(
    "--from",
    "source",
    type=click.Choice(["memstack", "mem0", "jsonl"]),
    default="memstack",
    show_default=True,
    help="memstack: an export document; mem0: mem0's get_all JSON; jsonl: {user_id, text, timestamp} lines.",
)
@click.option("--tenant", "-t", default=None, help="Tenant imported into (default: the document's, or 'default').")
@click.option("--user", "--user-id", "-u", "user_id", default=None, help="mem0: the user of memories naming none.")
@click.option("--no-capture", is_flag=True, help="jsonl: archive the messages without memory capture.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the reports as one JSON line (the last line).")
@run_async
async def import_users(
    file: Path,
    source: str,
    tenant: str | None,
    user_id: str | None,
    no_capture: bool,
    home: Path | None,
    as_json: bool,
) -> None:
    """Import users from FILE ('-': standard input): a memstack export document (one transaction; importing it
    again changes nothing; a user holding other data is refused), mem0's memories (with their ids and times), or
    JSONL messages run through memory capture at their own times. A refused import writes nothing."""
    async with _engine(home, quiet=as_json) as ms:
        if source == "memstack":
            reports = [await ms.import_user(_read(file, "export document"), tenant=tenant)]
        elif source == "mem0":
            try:
                data = json.loads(_read(file, "mem0 file"))
            except ValueError:
                raise ImportRefused(f"{file} is not JSON; nothing was imported") from None
            reports = await ms.users.import_mem0(data, user_id=user_id, tenant=tenant)
        else:
            lines = file if str(file) != "-" else sys.stdin.read()
            reports = await ms.users.import_messages(lines, tenant=tenant, capture=not no_capture)
    if as_json:
        echo_json({"users": [r.to_dict() for r in reports]})
        return
    for report in reports:
        click.echo(_line(report))


def _line(report: ImportReport) -> str:
    who = f"{report.user_id} ({report.tenant})"
    if report.unchanged:
        return f"{who}: already imported; nothing changed."
    written = ", ".join(f"{n} {table}" for table, n in report.added.items() if n) or "nothing new"
    skipped = f" ({report.skipped} already there)" if report.skipped else ""
    return f"Imported {who}: {written}{skipped}."
