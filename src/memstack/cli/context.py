"""``memstack context …``: render a context from a JSON request, explain a stored one, list recent ones, scan text
with the guard; ``memstack bench context``: the assembly benchmark.

Errors memstack raises on purpose print as one line (``Error: …``) with exit code 1.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from memstack.cli._common import HOME_HELP, clip, echo_json, open_engine, table_console
from memstack.errors import MemstackError
from memstack.types import Manifest

__all__ = ["add_bench", "bench_context", "context"]


def _read_json(path: str, what: str, option: str) -> Any:
    from memstack.files import read_text

    try:
        text = read_text(path, f"{what} file", hint=f"pass a UTF-8 JSON file with {option}")
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None


@click.group()
def context() -> None:
    """Inspect layered context assembly."""


@context.command("render")
@click.option("--request", "request_path", required=True, help="JSON request file ('-' for stdin).")
@click.option("--agent", "agent_path", default=None, help="Agent YAML file; replaces the request's agent.")
@click.option("--rules-only", is_flag=True, help="Content guard without the semantic layer (no embedder).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (messages, manifest, tokens).")
def render_cmd(request_path: str, agent_path: str | None, rules_only: bool, as_json: bool) -> None:
    """Assemble a context from a JSON request, without any store (the guard's semantic layer uses the local embedder).

    With --json the last line printed is {"messages": [...], "manifest": [...], "tokens": N}."""
    from memstack.context import assemble, load_agent
    from memstack.context.request import request_from_json

    data = _read_json(request_path, "request", "--request")
    try:
        request, notes = request_from_json(data)
        if agent_path:
            from dataclasses import replace

            request = replace(request, agent=load_agent(agent_path))
        ctx = assemble(request, guard=_guard(rules_only))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if as_json:
        out = {
            "messages": ctx.message_dicts(),
            "manifest": [entry.to_dict() for entry in ctx.manifest.entries],
            "tokens": ctx.tokens,
        }
        echo_json(out)
        return
    from rich.console import Console
    from rich.panel import Panel

    console = Console()  # messages wrap at the terminal's width (80 when piped); the manifest's rows never do
    for message in ctx.messages:
        console.print(Panel(message.content, title=message.role, title_align="left", highlight=False))
    _manifest_table(table_console(), ctx.manifest)


_UNSTORED = {"session": "session metadata is never stored"}


def _manifest_table(console: Any, manifest: Any, *, full: bool = False) -> None:
    """Every fragment with its text (cut to a line unless ``full``; quarantined text as blocks, its words withheld)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"context {manifest.context_id}: {manifest.tokens} of {manifest.budget_tokens} tokens")
    for column in ("layer", "source", "tokens", "status", "flags", "reason"):
        table.add_column(column, overflow="fold")
    table.add_column("text", overflow="fold", ratio=1, min_width=20)
    style = {"kept": "green", "trimmed": "yellow", "quarantined": "red"}
    for entry in manifest.entries:
        status = entry.status.value
        unstored = _UNSTORED.get(entry.layer, "not stored")
        table.add_row(
            entry.layer,
            entry.source,
            str(entry.tokens),
            f"[{style[status]}]{status}[/]",
            ", ".join(entry.flags),
            entry.reason,
            escape(clip(entry.text, full=full)) if entry.text else f"[dim]({unstored})[/]",
        )
    modes = [] if manifest.memory_enabled else ["memory off"]
    if manifest.temporary:
        modes.append("temporary chat: nothing persisted")
    console.print(table)
    console.print(
        f"agent {manifest.agent} (fingerprint {manifest.fingerprint[:12]}), model {manifest.model or 'default'} "
        f"({manifest.encoding})" + (f"; {', '.join(modes)}" if modes else "")
    )


def _stored(home: Path | None, work: Callable[[Any], Awaitable[Any]], *, quiet: bool = False) -> Any:
    """Run ``work(engine)`` on the configured store (named on stderr unless ``quiet``); memstack's own errors become
    one line and exit code 1."""

    async def run() -> Any:
        async with open_engine(home, quiet=quiet) as engine:
            return await work(engine)

    try:
        return asyncio.run(run())
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None


@context.command("explain")
@click.option("--context", "context_id", default=None, help="Context id (returned with each response).")
@click.option("--tenant", "-t", default="default", show_default=True, help="Tenant the context belongs to.")
@click.option("--user", "-u", "user_id", default=None, help="Only if the context belongs to this user.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the stored manifest as one JSON object.")
@click.option("--full", is_flag=True, help="Each fragment's whole text (default: its first line's worth).")
def explain_cmd(
    context_id: str | None, tenant: str, user_id: str | None, home: Path | None, as_json: bool, full: bool
) -> None:
    """Show what the model saw for one response: every fragment with its layer, tokens, status, flags and text.

    Give the response's --context id, or only --user for that user's latest response."""
    from memstack.errors import NotFound
    from memstack.types import UserRef

    if context_id is None and user_id is None:
        raise click.UsageError("give --context ID (returned with each response), or --user ID for their latest one")

    async def work(engine: Any) -> Manifest:
        if context_id is None:
            assert user_id is not None
            latest: list[Manifest] = await engine.contexts.recent(UserRef(user_id, tenant), limit=1)
            if not latest:
                raise click.ClickException(
                    f"no stored context for user {user_id!r} of tenant {tenant!r}: each chat reply stores the "
                    "context it was given (temporary chats excepted)"
                )
            return latest[0]
        try:
            manifest: Manifest = await engine.contexts.get(context_id, user_id=user_id, tenant=tenant)
        except NotFound:
            who = f"user {user_id!r} of " if user_id else ""
            raise click.ClickException(
                f"no context {context_id!r} for {who}tenant {tenant!r}; list recent ones with "
                "`memstack context list --user ID`"
            ) from None
        return manifest

    manifest = _stored(home, work, quiet=as_json)
    if as_json:
        echo_json(manifest.to_dict())
        return

    _manifest_table(table_console(), manifest, full=full)


@context.command("list")
@click.option("--user", "-u", "user_id", required=True, help="Whose contexts.")
@click.option("--tenant", "-t", default="default", show_default=True, help="Tenant the user belongs to.")
@click.option("--session", "session_id", default=None, help="Only this session's contexts.")
@click.option("--limit", default=20, show_default=True, help="How many, newest first.")
@click.option("--home", type=click.Path(path_type=Path), help=HOME_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
def list_cmd(user_id: str, tenant: str, session_id: str | None, limit: int, home: Path | None, as_json: bool) -> None:
    """The user's latest stored contexts, newest first."""
    from memstack.types import FragmentStatus, UserRef

    async def work(engine: Any) -> list[Manifest]:
        found: list[Manifest] = await engine.contexts.recent(
            UserRef(user_id, tenant), session_id=session_id, limit=limit
        )
        return found

    manifests = _stored(home, work, quiet=as_json)
    rows = [
        {
            "context_id": m.context_id,
            "created_at": m.created_at.isoformat(),
            "agent": m.agent,
            "tokens": m.tokens,
            "budget_tokens": m.budget_tokens,
            "kept": m.count(FragmentStatus.KEPT),
            "trimmed": m.count(FragmentStatus.TRIMMED),
            "quarantined": m.count(FragmentStatus.QUARANTINED),
        }
        for m in manifests
    ]
    if as_json:
        echo_json({"contexts": rows})
        return
    if not rows:
        click.echo(f"No stored contexts for {user_id} ({tenant}). Each chat turn stores the context it sent.")
        return
    from rich.table import Table

    table = Table(title=f"contexts of {user_id} ({tenant})")
    table.add_column("context_id", no_wrap=True, min_width=max(len(r["context_id"]) for r in rows), overflow="fold")
    for column in ("created_at", "agent", "tokens", "kept", "trimmed", "quarantined"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            *(str(row[c]) for c in ("context_id", "created_at", "agent", "tokens", "kept", "trimmed", "quarantined"))
        )
    table_console().print(table)


def _guard(rules_only: bool) -> Any:
    """The content guard of the CLI: phrase rules plus the semantic layer on the local embedder, or rules only."""
    from memstack.guard import RULES

    if rules_only:
        return RULES
    from memstack.embed import get_embedder
    from memstack.guard import SemanticGuard

    return SemanticGuard(get_embedder("local:minilm"))  # type: ignore[arg-type]


@context.command("scan")
@click.argument("texts", nargs=-1)
@click.option(
    "--data", "data_path", default=None, help='JSON file: a list of texts, or {"attacks": [...], "benign": [...]}.'
)
@click.option("--instructions", is_flag=True, help="Treat the texts as a delegated task's instructions.")
@click.option("--rules-only", is_flag=True, help="Phrase rules alone, without the semantic layer.")
@click.option("--candidates", is_flag=True, help="Score the texts as candidate memories (the write-time check).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object as the last line.")
def scan_cmd(
    texts: tuple[str, ...], data_path: str | None, instructions: bool, rules_only: bool, candidates: bool, as_json: bool
) -> None:
    """Show what the guard flags in each text (the content check of validate_no_override): phrase rules plus the
    semantic layer, or the rules alone with --rules-only; with --candidates, the write-time check of candidate
    memories (check_memory_candidate) with the same guard."""
    from memstack.guard import check_memory_candidate

    guard = _guard(rules_only)
    groups: dict[str, list[str]] = {"texts": list(texts)}
    if data_path:
        data = _read_json(data_path, "data", "--data")
        if isinstance(data, dict):
            for key in ("attacks", "benign", "texts"):
                if isinstance(data.get(key), list):
                    groups[key] = groups.get(key, []) + [str(t) for t in data[key]]
        elif isinstance(data, list):
            groups["texts"] += [str(t) for t in data]

    def flags_of(items: list[str]) -> list[tuple[str, ...]]:
        if not candidates:
            return list(guard.scan_many([(t, instructions) for t in items]))
        guard.scan_many([(t, False) for t in items])  # one embedding batch; the checks below hit the cache
        return [check_memory_candidate(t, guard=guard).flags for t in items]

    results = {name: list(zip(items, flags_of(items), strict=True)) for name, items in groups.items() if items}
    if not results:
        raise click.UsageError("give texts to scan, or --data FILE")
    summary: dict[str, Any] = {}
    for name, rows in results.items():
        flagged = sum(1 for _, flags in rows if flags)
        summary[name] = {"count": len(rows), "flagged": flagged}
        if not as_json:
            click.echo(f"{name}: {flagged} of {len(rows)} flagged")
            for text, flags in rows:
                mark = ",".join(flags) if flags else "-"
                click.echo(f"  [{mark}] {text}")
    if "attacks" in summary:
        summary["attack_recall"] = round(summary["attacks"]["flagged"] / summary["attacks"]["count"], 3)
    if "benign" in summary:
        summary["false_positive_rate"] = round(summary["benign"]["flagged"] / summary["benign"]["count"], 3)
    summary["guard"] = guard.name + (" (write-time check)" if candidates else "")
    echo_json(summary)


@click.command("context")
@click.option("--iterations", default=300, show_default=True, help="Timed assemblies per variant.")
@click.option("--memories", default=200, show_default=True, help="Candidate memories per request.")
@click.option("--thread", "thread_messages", default=60, show_default=True, help="Messages in the thread.")
@click.option("--budget", default=16_000, show_default=True, help="Token budget.")
@click.option("--model", default="gpt-4o-mini", show_default=True, help="Model family for the tokenizer.")
@click.option(
    "--guard",
    "guard_name",
    type=click.Choice(["rules", "semantic"]),
    default="rules",
    show_default=True,
    help="Content guard: phrase rules, or rules plus the semantic layer (embeds every text it has not seen).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON result line.")
def bench_context(
    iterations: int, memories: int, thread_messages: int, budget: int, model: str, guard_name: str, as_json: bool
) -> None:
    """Time context assembly (no model calls; embedding calls only with --guard semantic). The last line is one JSON
    object."""
    from memstack.bench.context import run

    result = run(
        iterations=iterations,
        memories=memories,
        thread=thread_messages,
        budget=budget,
        model=model,
        guard=_guard(guard_name == "rules"),
    )
    if not as_json:
        click.echo(
            f"assembly over {result['iterations']} runs: warm p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms; "
            f"cold p50 {result['cold_p50_ms']} ms, p99 {result['cold_p99_ms']} ms"
        )
    echo_json(result)


def add_bench(main: click.Group) -> None:
    """Register ``memstack bench context``, creating the ``bench`` group when no other module has yet."""
    bench = main.commands.get("bench")
    if not isinstance(bench, click.Group):
        bench = click.Group("bench", help="Measuring commands; each prints one JSON object as its last line.")
        main.add_command(bench)
    bench.add_command(bench_context)
