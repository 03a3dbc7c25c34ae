"""``memstack memories``: list, add, search, edit, forget (one, or ``--about`` a topic after a preview), restore,
delete and show the history of a user's memories.

Every command takes ``--user`` (and ``--tenant``); the data directory comes from ``--home``, else
``$MEMSTACK_HOME``, else the default (:func:`memstack.config.default_home`), and each command names it on stderr.
Errors memstack raises on purpose print as one line (``Error: …``) with exit code 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich import box
from rich.table import Table

from memstack.cli._common import HOME_HELP, echo_json, open_engine, run_async, table_console
from memstack.dates import when_held
from memstack.types import (
    Category,
    Forgetting,
    HiddenKind,
    Memory,
    MemoryEvent,
    MemoryUsage,
    ScoredMemory,
    UserRef,
    utcnow,
)

if TYPE_CHECKING:
    from memstack.engine import AsyncMemstack

__all__ = ["memories"]


_CATEGORY_HELP = f"One of: {', '.join(c.value for c in Category)}."
_FILTER_HELP = f"Only this category (repeat for more). {_CATEGORY_HELP}"


def _user_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)(fn)
    fn = click.option("--tenant", "-t", default="default", show_default=True, help="Tenant the user belongs to.")(fn)
    fn = click.option("--user", "--user-id", "-u", "user_id", required=True, help="Whose memories.")(fn)
    return fn


def _engine(home: Path | None, *, quiet: bool = False) -> AsyncMemstack:
    """The engine on the command's store, named on stderr unless ``quiet`` (``--json``)."""
    return open_engine(home, quiet=quiet)  # managing data: no background model work at open


def _when(value: datetime) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


def _status(memory: Memory) -> str:
    held = when_held(memory.valid_from, memory.valid_to, utcnow())
    if memory.is_active:
        return "active" if held is None else f"active, {held}"
    if memory.merged_into:
        return "merged"
    return "forgotten" if memory.deleted_by is not None or held is None else held


def _as_of(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    """``--as-of``: an ISO 8601 date or time (no zone: UTC, as everywhere in memstack)."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 date or time; use e.g. 2025-06-01") from None


def _usage_line(user: UserRef, usage: MemoryUsage) -> str:
    limit = "unlimited" if usage.limit is None else str(usage.limit)
    line = f"{user.user_id} ({user.tenant}): {usage.active} of {limit} memories, {usage.tier} tier"
    if usage.dropped:
        line += f"; {usage.dropped} automatic capture(s) not saved because the tier was full"
    return line


def _memory_table(rows: Sequence[Memory | ScoredMemory], title: str) -> Table:
    """Ids are never cut (they are what the other commands take); the text wraps. Dates: ``history``."""
    memories = [r.memory if isinstance(r, ScoredMemory) else r for r in rows]
    scored = any(isinstance(r, ScoredMemory) for r in rows)
    show_status = any(not m.is_active for m in memories)
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("id", no_wrap=True, min_width=max(len(m.id) for m in memories), overflow="fold")
    if scored:
        table.add_column("score", justify="right", no_wrap=True)
    table.add_column("category", no_wrap=True)
    table.add_column("memory", overflow="fold", ratio=1, min_width=16)
    if show_status:
        table.add_column("status", no_wrap=True)
    for row, memory in zip(rows, memories, strict=True):
        cells = [memory.id]
        if scored:
            cells.append(f"{row.score:.3f}" if isinstance(row, ScoredMemory) else "")
        cells += [memory.category.value, memory.content]
        if show_status:
            cells.append(_status(memory))
        table.add_row(*cells)
    return table


def _memory_json(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "user_id": memory.user_id,
        "tenant": memory.tenant,
        "agent_id": memory.agent_id,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        **memory.snapshot(),
    }


def _event_json(event: MemoryEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "memory_id": event.memory_id,
        "action": event.action.value,
        "at": event.at.isoformat(),
        "actor": event.actor,
        "note": event.note,
        "before": event.before,
        "after": event.after,
    }


def _change(event: MemoryEvent) -> str:
    before, after = event.before or {}, event.after or {}
    if not before:
        return str(after.get("content", ""))
    if not after:
        return f"deleted: {before.get('content', '')}"
    changed = [key for key in after if after.get(key) != before.get(key)]
    if "content" in changed:
        return f"{before['content']} → {after['content']}"
    return ", ".join(f"{key}: {before.get(key)} → {after.get(key)}" for key in changed) or "(no change)"


@click.group("memories")
def memories() -> None:
    """Manage a user's long-term memories."""


@memories.command("list")
@_user_options
@click.option(
    "--category", "-c", "categories", multiple=True, help=f"Only this category (repeatable). {_CATEGORY_HELP}"
)
@click.option("--text", help="Only memories containing every word of this text.")
@click.option("--deleted", is_flag=True, help="Include forgotten memories.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0))
@click.option(
    "--as-of",
    "as_of",
    callback=_as_of,
    metavar="TIME",
    help="What held at this time (ISO 8601, e.g. 2025-06-01 or 2025-06-01T09:00+02:00; no zone: UTC) instead of now.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@run_async
async def list_memories(
    user_id: str,
    tenant: str,
    home: Path | None,
    categories: tuple[str, ...],
    text: str | None,
    deleted: bool,
    limit: int,
    offset: int,
    as_of: datetime | None,
    as_json: bool,
) -> None:
    """List memories, newest first (--as-of: those that held then)."""
    user = UserRef(user_id, tenant)
    async with _engine(home, quiet=as_json) as ms:
        found = await ms.list(
            user, category=categories or None, text=text, include_deleted=deleted, limit=limit, offset=offset,
            as_of=as_of,
        )  # fmt: skip
        usage = await ms.usage(user)
    if as_json:
        echo_json([_memory_json(m) for m in found])
        return
    console = table_console()
    if not found:
        console.print(f"{_usage_line(user, usage)}; none match." if usage.active else f"{user_id} has no memories.")
        return
    console.print(_memory_table(found, _usage_line(user, usage)))


@memories.command("add")
@_user_options
@click.argument("content")
@click.option("--category", "-c", default="general", show_default=True, help=_CATEGORY_HELP)
@click.option("--tier", help="The user's tier, for the memory limit (default: the configured default tier).")
@click.option("--agent", "agent_id", help="Keep the memory private to this agent.")
@click.option("--force", is_flag=True, help="Store it even when the user already has this memory.")
@click.option("--valid-from", callback=_as_of, metavar="TIME", help="When it started to hold (ISO 8601; no zone: UTC).")
@click.option(
    "--valid-to", callback=_as_of, metavar="TIME", help="When it stopped holding (already over: a past fact)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the memory as one JSON object, with its action.")
@run_async
async def add_memory(
    user_id: str,
    tenant: str,
    home: Path | None,
    content: str,
    category: str,
    tier: str | None,
    agent_id: str | None,
    force: bool,
    valid_from: datetime | None,
    valid_to: datetime | None,
    as_json: bool,
) -> None:
    """Save one memory (source: manual). One the user already has is not saved twice (the same text, or a
    duplicate by the capture pipeline's rule): the existing one is shown; --force saves another."""
    user = UserRef(user_id, tenant)
    async with _engine(home, quiet=as_json) as ms:
        added = await ms.add_result(
            user, content, category=category, tier=tier, agent_id=agent_id, force=force, valid_from=valid_from,
            valid_to=valid_to,
        )  # fmt: skip
        usage = await ms.usage(user, tier=tier)
    memory = added.memory
    if as_json:
        echo_json({**_memory_json(memory), "action": added.action.value, "reason": added.reason})
        return
    if added.duplicate:
        click.echo(f"Already saved {memory.id} (duplicate): {memory.content}; --force to store another")
        return
    click.echo(f"Saved {memory.id} ({memory.category.value}). {_usage_line(user, usage)}")


@memories.command("search")
@_user_options
@click.argument("query")
@click.option(
    "--limit", "-k", "k", default=5, show_default=True, type=click.IntRange(1, 1000), help="How many results at most."
)
@click.option(
    "--category", "-c", "categories", multiple=True, help=f"Only this category (repeatable). {_CATEGORY_HELP}"
)
@click.option(
    "--as-of",
    "as_of",
    callback=_as_of,
    metavar="TIME",
    help="What held at this time (ISO 8601, e.g. 2025-06-01 or 2025-06-01T09:00+02:00; no zone: UTC) instead of now.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@run_async
async def search_memories(
    user_id: str,
    tenant: str,
    home: Path | None,
    query: str,
    k: int,
    categories: tuple[str, ...],
    as_of: datetime | None,
    as_json: bool,
) -> None:
    """Find the memories closest in meaning to QUERY (--as-of: among those that held then)."""
    user = UserRef(user_id, tenant)
    async with _engine(home, quiet=as_json) as ms:
        hits = await ms.search(user, query, limit=k, category=categories or None, as_of=as_of)
    if as_json:
        echo_json([{"score": h.score, **_memory_json(h.memory)} for h in hits])
    elif not hits:
        click.echo(f"{user_id} has no memories to search.")
    else:
        table_console().print(_memory_table(hits, f"closest to {query!r}"))


@memories.command("edit")
@_user_options
@click.argument("memory_id")
@click.option("--content", help="New text (re-embedded).")
@click.option("--category", "-c", help=f"New category. {_CATEGORY_HELP}")
@click.option("--json", "as_json", is_flag=True, help="Print the changed memory as one JSON object.")
@run_async
async def edit_memory(
    user_id: str,
    tenant: str,
    home: Path | None,
    memory_id: str,
    content: str | None,
    category: str | None,
    as_json: bool,
) -> None:
    """Change a memory's text or category (the old version stays in its history)."""
    async with _engine(home, quiet=as_json) as ms:
        memory = await ms.edit(UserRef(user_id, tenant), memory_id, content=content, category=category)
    if as_json:
        echo_json(_memory_json(memory))
        return
    click.echo(f"Updated {memory.id} ({memory.category.value}): {memory.content}")


@memories.command("forget")
@_user_options
@click.argument("memory_id", required=False)
@click.option("--about", "query", help="Forget every memory about this instead (e.g. 'my cat'), after a preview.")
@click.option("--dry-run", is_flag=True, help="With --about: only show what would be forgotten and hidden.")
@click.option("--yes", "-y", is_flag=True, help="With --about: do not ask for confirmation after the preview.")
@click.option("--json", "as_json", is_flag=True, help="With --about: print the outcome as JSON.")
@run_async
async def forget_memory(
    user_id: str,
    tenant: str,
    home: Path | None,
    memory_id: str | None,
    query: str | None,
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Stop using a memory (MEMORY_ID), or every memory about something (--about); each can be restored. What a
    memory came from in past conversations, and what was derived from it, stops reaching the model with it."""
    if (memory_id is None) == (query is None):
        raise click.UsageError("name one memory (MEMORY_ID) or what to forget everything about (--about)")
    user = UserRef(user_id, tenant)
    async with _engine(home, quiet=as_json) as ms:
        if memory_id is not None:
            if dry_run or as_json:
                raise click.UsageError("--dry-run and --json go with --about")
            await ms.forget(user, memory_id)
            click.echo(f"Forgot {memory_id}. Undo with: memstack memories restore --user {user_id} {memory_id}")
            return
        assert query is not None
        preview = await ms.forget_about(user, query, dry_run=True)
        if not preview.memories:
            if as_json:
                echo_json(_forgetting_json(preview))
            else:
                click.echo(f"No memory is about {query!r}; nothing forgotten.")
            return
        if not as_json:
            _show_forgetting(preview)
        if dry_run:
            if as_json:
                echo_json(_forgetting_json(preview))
            return
        if not yes and not as_json:
            click.confirm(f"Forget these {len(preview.memories)} memories and hide what is listed?", abort=True)
        done = await ms.forget_about(user, query)
    if as_json:
        echo_json(_forgetting_json(done))
        return
    ids = " ".join(m.id for m in done.memories)
    click.echo(f"Forgot {len(done.memories)} memories. Undo one with: memstack memories restore --user {user_id} ID")
    click.echo(f"  ({ids})")


def _forgetting_json(f: Forgetting) -> dict[str, Any]:
    return {
        "query": f.query,
        "dry_run": f.dry_run,
        "memories": [_memory_json(m) for m in f.memories],
        "hidden": [i.to_dict() for i in f.hidden],
    }


def _show_forgetting(f: Forgetting) -> None:
    console = table_console()
    console.print(_memory_table(f.memories, f"memories about {f.query!r}"))
    if not f.hidden:
        console.print("Nothing else mentions them.")
        return
    table = Table(title="hidden with them", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("kind", "session", "turn", "why"):
        table.add_column(name, no_wrap=True)
    table.add_column("text", overflow="fold", ratio=1, min_width=16)
    for item in f.hidden:
        turn = str(item.turn) if item.kind is HiddenKind.TURN else ""
        table.add_row(item.kind.value, item.session_id, turn, item.reason, item.text)
    console.print(table)


@memories.command("restore")
@_user_options
@click.argument("memory_id")
@click.option("--tier", help="The user's tier, for the memory limit.")
@run_async
async def restore_memory(user_id: str, tenant: str, home: Path | None, memory_id: str, tier: str | None) -> None:
    """Make a forgotten memory active again (the tier limit applies)."""
    async with _engine(home) as ms:
        memory = await ms.restore(UserRef(user_id, tenant), memory_id, tier=tier)
    click.echo(f"Restored {memory.id}: {memory.content}")


@memories.command("delete")
@_user_options
@click.argument("memory_id")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@run_async
async def delete_memory(user_id: str, tenant: str, home: Path | None, memory_id: str, yes: bool) -> None:
    """Delete a memory permanently (only its history remains)."""
    if not yes:
        click.confirm(f"Delete {memory_id} permanently? This cannot be undone", abort=True)
    async with _engine(home) as ms:
        await ms.delete(UserRef(user_id, tenant), memory_id)
    click.echo(f"Deleted {memory_id} permanently.")


@memories.command("history")
@_user_options
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@run_async
async def memory_history(user_id: str, tenant: str, home: Path | None, memory_id: str, as_json: bool) -> None:
    """Every change to a memory, oldest first (kept even after a permanent delete)."""
    async with _engine(home, quiet=as_json) as ms:
        events = await ms.history(UserRef(user_id, tenant), memory_id)
    if as_json:
        echo_json([_event_json(e) for e in events])
        return
    table = Table(title=f"history of {memory_id}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("when", "action", "by"):
        table.add_column(name, no_wrap=True)
    table.add_column("change", overflow="fold", ratio=1)
    table.add_column("note", overflow="fold")
    for event in events:
        table.add_row(_when(event.at), event.action.value, event.actor, _change(event), event.note)
    table_console().print(table)
