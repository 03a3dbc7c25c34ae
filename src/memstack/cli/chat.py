"""``memstack chat``: talk to the engine in the terminal, with the "Memory updated" badge after each reply.

Commands inside the chat: ``/memories`` (what is remembered), ``/forget ID`` (forget one memory) or ``/forget
words`` (everything about them, after a preview),
``/explain`` (what the model saw for the last reply), ``/new`` (start a new session), ``/help``, ``/quit``.
With no chat model configured the replies come from the offline responder, which says so.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from memstack.cli._common import HOME_HELP, echo_json, open_engine
from memstack.engine import AsyncMemstack
from memstack.errors import MemstackError
from memstack.types import (
    ChatDone,
    ChatResult,
    ChatToken,
    ChatToolEvent,
    FragmentStatus,
    Manifest,
    Memory,
    UpdateAction,
    UserRef,
)

__all__ = ["bench_turn", "chat", "print_badge", "print_explain", "register"]

_HELP = (
    "/memories  list what is remembered about you\n"
    "/forget ID  forget one memory (restorable with `memstack memories restore`)\n"
    "/forget words  forget everything about them (a preview first; each restorable)\n"
    "/explain  show what the model saw for the last reply\n"
    "/new  start a new session\n"
    "/quit  leave (Ctrl-D works too)"
)
_STATUS_STYLE = {FragmentStatus.KEPT: "green", FragmentStatus.TRIMMED: "yellow", FragmentStatus.QUARANTINED: "red"}


def print_badge(console: Console, result: ChatResult) -> None:
    """The "Memory updated" badge and what else detection reported for this reply."""
    for update in result.badge:
        verb = "Memory updated" if update.action.value == "updated" else "Memory saved"
        console.print(f"  [bold green]✓ {verb}[/] [dim]({update.category.value})[/] {escape(update.content)}")
    for update in result.memory_updates:
        if update.action is UpdateAction.DUPLICATE:
            console.print(f"  [dim]= already remembered: {escape(update.content)}[/]")
        elif update.action is UpdateAction.DROPPED_LIMIT:  # the tier is full: never silent
            console.print(f"  [bold yellow]! Memory full, {escape(update.note)}:[/] {escape(update.content)}")
    if result.upgrade_prompt:
        console.print(f"  [bold yellow]! {escape(result.upgrade_prompt)}[/]")
    if result.memory_pending:
        console.print("  [dim]… still checking this message for things to remember (saved in the background)[/]")


def print_explain(console: Console, manifest: Manifest | None, *, title: str = "What the model saw") -> None:
    """Per layer: fragments kept / trimmed / quarantined and their tokens; then every fragment that was not kept
    or was flagged, with the reason."""
    if manifest is None:
        console.print("[dim]nothing to explain yet: send a message first[/]")
        return
    table = Table(title=f"{title}: {manifest.tokens} of {manifest.budget_tokens} tokens", box=box.SIMPLE_HEAD)
    for column in ("layer", "kept", "trimmed", "quarantined", "tokens kept"):
        table.add_column(column, justify="left" if column == "layer" else "right")
    order: list[str] = []
    counts: dict[str, Counter[FragmentStatus]] = {}
    tokens: Counter[str] = Counter()
    for entry in manifest.entries:
        if entry.layer not in counts:
            order.append(entry.layer)
            counts[entry.layer] = Counter()
        counts[entry.layer][entry.status] += 1
        if entry.status is FragmentStatus.KEPT:
            tokens[entry.layer] += entry.tokens
    for layer in order:
        c = counts[layer]
        table.add_row(
            layer,
            str(c[FragmentStatus.KEPT]),
            f"[yellow]{c[FragmentStatus.TRIMMED]}[/]" if c[FragmentStatus.TRIMMED] else "0",
            f"[red]{c[FragmentStatus.QUARANTINED]}[/]" if c[FragmentStatus.QUARANTINED] else "0",
            str(tokens[layer]),
        )
    console.print(table)
    for entry in manifest.entries:
        if entry.status is FragmentStatus.KEPT and not entry.flags:
            continue
        style = _STATUS_STYLE[entry.status]
        flags = f" [{', '.join(entry.flags)}]" if entry.flags else ""
        console.print(f"  [{style}]{entry.status.value}[/] {entry.source}{escape(flags)}: {escape(entry.reason)}")
    modes = [] if manifest.memory_enabled else ["memory off"]
    if manifest.temporary:
        modes.append("temporary: nothing stored")
    console.print(
        f"  [dim]context {manifest.context_id}, agent {manifest.agent}, {manifest.encoding}"
        + (f"; {', '.join(modes)}" if modes else "")
        + "[/]"
    )


def _memory_rows(console: Console, memories: Sequence[Memory]) -> None:
    if not memories:
        console.print("[dim]nothing remembered yet[/]")
        return
    table = Table(box=box.SIMPLE_HEAD, show_header=True)
    table.add_column("id", no_wrap=True)
    table.add_column("category")
    table.add_column("memory")
    for m in memories:
        table.add_row(m.id, m.category.value, escape(m.content))
    console.print(table)


async def _forget(ms: AsyncMemstack, console: Console, user: UserRef, target: str) -> None:
    """``/forget ID`` forgets that memory; ``/forget words`` everything about them, after a preview and a yes."""
    target = target.strip()
    if not target:
        console.print("[yellow]say what to forget: /forget ID, or /forget what it is about (e.g. my cat)[/]")
        return
    if target.startswith("mem_") and " " not in target:
        forgotten = await ms.forget(user, target, by="user", note="forgotten from memstack chat")
        console.print(f"  [green]forgot[/] {escape(forgotten.content)} [dim]({forgotten.id}; restorable)[/]")
        return
    preview = await ms.forget_about(user, target, dry_run=True)
    if not preview.memories:
        console.print("[yellow]no memory is about that[/]")
        return
    for memory in preview.memories:
        console.print(f"  [yellow]-[/] {escape(memory.content)} [dim]({memory.id})[/]")
    if preview.hidden:
        kinds = Counter(item.kind.value for item in preview.hidden)
        said = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(kinds.items()))
        console.print(f"  [dim]and what they came from or what mentions them: {said}[/]")
    which = "these" if len(preview.memories) > 1 else "this"
    answer = await asyncio.to_thread(console.input, f"forget {which}? {escape('[y/N]')} ")
    if answer.strip().lower() not in ("y", "yes"):
        console.print("[dim]nothing forgotten[/]")
        return
    done = await ms.forget_about(user, target)
    for memory in done.memories:
        console.print(f"  [green]forgot[/] {escape(memory.content)} [dim]({memory.id}; restorable)[/]")


async def _turn(ms: AsyncMemstack, console: Console, user: UserRef, text: str, options: dict[str, Any]) -> ChatResult:
    result: ChatResult | None = None
    console.print("[bold cyan]memstack>[/] ", end="")
    async for event in ms.chat_stream(user, text, **options):
        if isinstance(event, ChatToken):
            console.print(escape(event.text), end="", soft_wrap=True, highlight=False)
        elif isinstance(event, ChatToolEvent):
            console.print(f"\n  [dim]⚙ {event.use.name}({escape(str(dict(event.use.arguments)))})[/]")
        elif isinstance(event, ChatDone):
            result = event.result
    console.print()
    assert result is not None  # every turn ends with ChatDone
    print_badge(console, result)
    return result


async def _loop(ms: AsyncMemstack, console: Console, user: UserRef, options: dict[str, Any]) -> None:
    last: ChatResult | None = None
    while True:
        try:
            text = await asyncio.to_thread(console.input, "[bold]you>[/] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        command, _, rest = text.strip().partition(" ")
        try:
            if not text.strip():
                continue
            if command in ("/quit", "/exit"):
                return
            if command == "/help":
                console.print(_HELP)
            elif command == "/memories":
                _memory_rows(console, await ms.list(user))
            elif command == "/forget":
                await _forget(ms, console, user, rest)
            elif command == "/explain":
                print_explain(console, last.manifest if last else None)
            elif command == "/new":
                options.update(session_id=None, new_session=True)
                console.print("[dim]new session[/]")
            elif command.startswith("/"):
                console.print(f"[yellow]unknown command {escape(command)}[/]\n{_HELP}")
            else:
                last = await _turn(ms, console, user, text, options)
                options.update(session_id=last.session_id, new_session=False)
        except MemstackError as exc:
            console.print(f"[red]Error:[/] {escape(str(exc))}")


@click.command("chat")
@click.option("--user", "-u", "user_id", required=True, help="Who is chatting (memories are theirs).")
@click.option("--tenant", "-t", default="default", show_default=True, help="Tenant the user belongs to.")
@click.option("--agent", "-a", "agent", default=None, help="Agent YAML file (or a name under <home>/agents).")
@click.option("--session", "-s", "session_id", default=None, help="Continue this session (default: your current one).")
@click.option("--new", "new_session", is_flag=True, help="Start a new session instead of continuing the current one.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("--timezone", "timezone", default=None, help="Your IANA time zone, e.g. Europe/Paris.")
@click.option("--tier", default=None, help="Subscription tier for memory limits (when tiers are configured).")
@click.option("--no-memory", is_flag=True, help="No long-term memory read or write.")
@click.option("--temporary", is_flag=True, help="Temporary chat: nothing is stored.")
@click.option("--verbose", "-v", is_flag=True, help="Show memstack's warnings (model failures, retries).")
def chat(
    user_id: str,
    tenant: str,
    agent: str | None,
    session_id: str | None,
    new_session: bool,
    home: Path | None,
    timezone: str | None,
    tier: str | None,
    no_memory: bool,
    temporary: bool,
    verbose: bool,
) -> None:
    """Chat in the terminal with memory ("Memory updated" badges; /help for commands)."""
    console = Console(highlight=False)
    if not verbose:
        logging.getLogger("memstack").setLevel(logging.ERROR)
    metadata = {k: v for k, v in (("timezone", timezone), ("tier", tier)) if v is not None}
    options: dict[str, Any] = {
        "session_id": session_id,
        "new_session": new_session,
        "metadata": metadata,
        "agent": agent,
        "memory": not no_memory,
        "temporary": temporary,
    }

    async def main() -> None:
        async with open_engine(home, resume=True) as ms:
            model = ms.chat_model_name
            console.print(f"[dim]memstack chat as {escape(user_id)} ({escape(model)}); /help for commands[/]")
            await _loop(ms, console, UserRef(user_id, tenant), options)
            console.print("[dim]saving the last turn…[/]")

    try:
        asyncio.run(main())
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("turn")
@click.option("--turns", default=200, show_default=True, help="Timed no-save turns (after 5 warm-up turns).")
@click.option("--save-turns", default=100, show_default=True, type=click.IntRange(min=1), help="Timed saving turns.")
@click.option("--memories", default=200, show_default=True, help="Memories each user holds.")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model.")
@click.option("--guard", type=click.Choice(["auto", "rules", "semantic"]), default="auto", show_default=True)
@click.option(
    "--cold-users",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="Users whose first turn is timed (cold), for each kind of turn.",
)
@click.option(
    "--first-runs",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="New processes whose engine's first turn is timed.",
)
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option(
    "--gc-freeze-s",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Keep the garbage collector as `memstack serve` does, every so many seconds (memstack.collector); 0: leave "
    "the process's collector alone, as a library host does.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
def bench_turn(
    turns: int,
    save_turns: int,
    memories: int,
    embedder: str,
    guard: str,
    cold_users: int,
    first_runs: int,
    backend: str,
    gc_freeze_s: float,
    as_json: bool,
) -> None:
    """What a chat turn costs memstack itself (offline responder: no model time), for turns that save nothing and
    turns that save a memory, warm and cold, with where the time went. See memstack.bench.turn. PostgreSQL is an
    embedded server unless MEMSTACK_DATABASE_URL names one (use a scratch database)."""
    from memstack.bench.turn import TurnBenchConfig, run_turn_bench

    logging.getLogger("memstack").setLevel(logging.ERROR)
    url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if backend == "postgres" else None
    try:
        cfg = TurnBenchConfig(
            turns=turns,
            memories=memories,
            embedder=embedder,
            guard=guard,
            cold_users=cold_users,
            save_turns=save_turns,
            first_runs=first_runs,
            backend=backend,
            gc_freeze_s=gc_freeze_s or None,
        )
        result = asyncio.run(run_turn_bench(cfg, database_url=url))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    r = result
    click.echo(
        f"{r['memories']} memories a user ({r['embedder']}, guard {r['guard']}, {r['backend']}); the embedder alone: "
        f"{r['limit_embed_p50_ms']} ms a message\n"
        f"no-save turns: warm p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms ({r['p50_over_limit']}x the embedder); a "
        f"user's first turn p50 {r['cold_p50_ms']} ms, p99 {r['cold_p99_ms']} ms\n"
        f"saving turns: warm p50 {r['save_p50_ms']} ms, p99 {r['save_p99_ms']} ms ({r['saved']} of "
        f"{r['save_turns']} saved); a user's first turn p50 {r['save_cold_p50_ms']} ms, "
        f"p99 {r['save_cold_p99_ms']} ms\n"
        f"the engine's first turn: {r['first_ms']} ms once open returned (open {r['open_ms']} ms)\n"
        f"load average {r['load_avg_start']} at start, {r['load_avg_end']} at end"
    )
    for group, shares in r["stages"].items():
        click.echo(f"  {group:>9}: " + ", ".join(f"{k} {v:.0%}" for k, v in shares.items() if v >= 0.005))


def register(main: click.Group) -> None:
    """Add ``chat`` and ``bench turn`` (creating the ``bench`` group when no other module has yet)."""
    main.add_command(chat)
    bench = main.commands.get("bench")
    if not isinstance(bench, click.Group):
        bench = click.Group("bench", help="Measuring commands; each prints one JSON object as its last line.")
        main.add_command(bench)
    bench.add_command(bench_turn)
