"""``memstack sessions``: list a user's sessions, show one session's memory, search the archive of past exchanges.

``show`` is the monitoring view of seed 04 §7: base truth (hard exceptions marked), the turn log with each turn's
route and status, the raw window, the turns still flagged (pending or unsummarized, with their error), base-truth
snapshots and artifacts. Every command takes ``--user`` (and ``--tenant``) and ``--json``. Piped, each row is one
line and each text a line's worth (``--full``: all of it, still one line per row): a 30,000-character message made a
30,000-character line, and the header box was as wide as the widest table could be.
"""

from __future__ import annotations

import math
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path

import click
from rich import box
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from memstack.cli._common import clip, echo_json, run_async, table_console
from memstack.cli.memories import _engine, _user_options
from memstack.engine import Sessions
from memstack.errors import NotFound
from memstack.session.settings import SessionSettings
from memstack.session.window import evict
from memstack.types import (
    ArchivedTurn,
    ArchiveHit,
    Artifact,
    BaseTruthSnapshot,
    SessionState,
    SessionSummary,
    TurnStatus,
    UserRef,
)

__all__ = ["sessions"]

_STATUS_STYLE = {
    TurnStatus.SUMMARIZED: "green",
    TurnStatus.PENDING: "bold yellow",
    TurnStatus.UNSUMMARIZED: "bold yellow",
    TurnStatus.FALLBACK: "red",
}


def _when(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M") if value is not None else "-"


@click.group("sessions")
def sessions() -> None:
    """Inspect session memory: base truth, turn log, raw window, flagged turns, snapshots."""


@sessions.command("list")
@_user_options
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@run_async
async def list_sessions(user_id: str, tenant: str, home: Path | None, limit: int, offset: int, as_json: bool) -> None:
    """A user's sessions, most recently active first."""
    user = UserRef(user_id, tenant)
    async with _engine(home, quiet=as_json) as ms:
        found = await ms.sessions.list(user, limit=limit, offset=offset)
    if as_json:
        echo_json([asdict(s) for s in found])
        return
    console = table_console()
    if not found:
        console.print(f"{user_id} has no sessions.")
        return
    console.print(_sessions_table(found, f"Sessions of {user_id} ({tenant})"))


def _sessions_table(rows: list[SessionSummary], title: str) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("session", no_wrap=True, min_width=max(len(r.session_id) for r in rows), overflow="fold")
    table.add_column("agent", no_wrap=True)
    table.add_column("turns", justify="right")
    table.add_column("flagged", justify="right")
    table.add_column("last active", no_wrap=True)
    table.add_column("ended", no_wrap=True)
    table.add_column("line", overflow="fold", ratio=1, min_width=16)
    for r in rows:
        flagged = Text(str(r.flagged), style="bold yellow") if r.flagged else Text("0")
        table.add_row(
            r.session_id, r.agent or "-", str(r.turn_count), flagged, _when(r.updated_at), _when(r.ended_at), r.line
        )
    return table


@sessions.command("show")
@_user_options
@click.argument("session_id")
@click.option(
    "--turns", "last_turns", default=20, show_default=True, type=click.IntRange(0), help="Last N turns (0: all)."
)
@click.option(
    "--window", default=SessionSettings().window, show_default=True, type=click.IntRange(2), help="Raw window size."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
@click.option("--full", is_flag=True, help="Every message and summary whole (default: a line's worth of each).")
@run_async
async def show_session(
    user_id: str,
    tenant: str,
    home: Path | None,
    session_id: str,
    last_turns: int,
    window: int,
    as_json: bool,
    full: bool,
) -> None:
    """One session's memory: base truth, turn log, raw window, flagged turns, snapshots, artifacts."""
    user = UserRef(user_id, tenant)
    settings = SessionSettings(window=window)
    async with _engine(home, quiet=as_json) as ms:
        window_turns = math.ceil(window / 2) + settings.long_extra_turns + 1
        state = await ms.sessions.get(user, session_id, window_turns=window_turns)
        count = state.turn_count if last_turns == 0 else min(last_turns, state.turn_count)
        turns = await ms.sessions.turns(user, session_id, limit=max(count, 1), offset=state.turn_count - count)
        flagged = [  # turns are numbered 1, 2, … without gaps: turn n is at offset n - 1
            t
            for n in state.flagged_turns[:50]
            for t in await ms.sessions.turns(user, session_id, limit=1, offset=n - 1)
        ]
        snapshots = await ms.sessions.snapshots(user, session_id, limit=10)
        artifacts = await ms.sessions.artifacts(user, session_id)
        summary = await _summary(ms.sessions, user, session_id)
    state = replace(state, raw_window=evict(state.raw_window, window))
    turns = turns if count else []
    if as_json:
        echo_json(
            {
                "session": asdict(summary),
                "base_truth": [asdict(f) for f in state.base_truth],
                "turns": [asdict(t) for t in turns],
                "raw_window": [asdict(m) for m in state.raw_window],
                "flagged": [asdict(t) for t in flagged],
                "snapshots": [asdict(s) for s in snapshots],
                "artifacts": [asdict(a) for a in artifacts],
            }
        )
        return
    console = table_console()
    console.print(_header(summary, state))
    console.print(_base_truth(state, full))
    console.print(_turn_log(turns, state.turn_count, full))
    console.print(_raw_window(state, full))
    console.print(_flagged(flagged, full))
    console.print(_snapshots(snapshots))
    if artifacts:
        console.print(_artifacts(artifacts))


async def _summary(sessions: Sessions, user: UserRef, session_id: str) -> SessionSummary:
    offset = 0
    while page := await sessions.list(user, limit=200, offset=offset):
        for row in page:
            if row.session_id == session_id:
                return row
        offset += len(page)
    raise NotFound("session", session_id)


def _header(summary: SessionSummary, state: SessionState) -> Panel:
    lines = [
        Text.assemble(
            ("user ", "dim"), f"{summary.user_id} ({summary.tenant})", ("   agent ", "dim"), summary.agent or "-"
        ),
        Text.assemble(
            ("turns ", "dim"),
            str(state.turn_count),
            ("   started ", "dim"),
            _when(summary.created_at),
            ("   last active ", "dim"),
            _when(summary.updated_at),
            ("   ended ", "dim"),
            _when(summary.ended_at),
            ("   consolidated at turn ", "dim"),
            str(state.last_consolidated_turn or "-"),
        ),
    ]
    if summary.line:
        lines.append(
            Text.assemble(
                ("cross-session line ", "dim"),
                summary.line,
                ("  (after turn ", "dim"),
                str(summary.line_turn),
                (")", "dim"),
            )
        )
    return Panel(Group(*lines), title=f"session {summary.session_id}", title_align="left", expand=False)


def _base_truth(state: SessionState, full: bool) -> Table:
    hard = sum(f.hard_exception for f in state.base_truth)
    title = f"Base truth: {len(state.base_truth)} facts, {hard} hard exception{'s' * (hard != 1)}"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, min_width=len(title))
    table.add_column("", no_wrap=True)
    table.add_column("fact", overflow="fold", ratio=1)
    table.add_column("since turn", justify="right", no_wrap=True)
    for fact in sorted(state.base_truth, key=lambda f: not f.hard_exception):
        mark = Text("HARD", style="bold red") if fact.hard_exception else Text("")
        text = clip(fact.text, full=full)
        table.add_row(mark, Text(text, style="bold" if fact.hard_exception else ""), str(fact.since_turn))
    if not state.base_truth:
        table.add_row("", Text("(none yet)", style="dim"), "")
    return table


def _turn_log(turns: list[ArchivedTurn], total: int, full: bool) -> Table:
    shown = f"last {len(turns)} of {total}" if len(turns) < total else f"{total}"
    table = Table(title=f"Turn log ({shown} turns)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("route", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("user", overflow="fold", ratio=1)
    table.add_column("assistant", overflow="fold", ratio=1)
    for t in turns:
        status = Text(t.status.value, style=_STATUS_STYLE[t.status])
        if t.attempts > 1:
            status.append(f" ×{t.attempts}", style="dim")
        pending = t.status is TurnStatus.PENDING
        table.add_row(
            str(t.turn),
            t.route or "-",
            status,
            Text("(summary due)", style="dim") if pending else clip(t.user_summary, full=full),
            "" if pending else clip(t.assistant_summary, full=full),
        )
    return table


def _raw_window(state: SessionState, full: bool) -> Table:
    table = Table(
        title=f"Raw window ({len(state.raw_window)} messages)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("role", no_wrap=True)
    table.add_column("message", overflow="fold", ratio=1)
    for m in state.raw_window:
        text = clip(m.content, full=full)
        role = m.role + (f" (+{m.keep_extra_turns} turns)" if m.keep_extra_turns else "")
        table.add_row(str(m.turn), role, text)
    return table


def _flagged(turns: list[ArchivedTurn], full: bool) -> Text | Table:
    if not turns:
        return Text("Flagged turns: none (every turn is summarized)", style="green")
    table = Table(
        title=f"Flagged turns: {len(turns)} (summarized again in the background or at the next start)",
        title_justify="left",
        title_style="bold yellow",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("attempts", justify="right", no_wrap=True)
    table.add_column("error", overflow="fold", ratio=1)
    for t in turns:
        error = t.error or ("interrupted before its summary was stored" if t.status is TurnStatus.PENDING else "")
        status = Text(t.status.value, style=_STATUS_STYLE[t.status])
        table.add_row(str(t.turn), status, str(t.attempts), clip(error, full=full))
    return table


def _snapshots(snapshots: list[BaseTruthSnapshot]) -> Text | Table:
    if not snapshots:
        return Text("Snapshots: none yet", style="dim")
    table = Table(title="Base-truth snapshots (latest)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("reason", no_wrap=True)
    table.add_column("facts", justify="right", no_wrap=True)
    table.add_column("hard", justify="right", no_wrap=True)
    table.add_column("change since the previous one", overflow="fold", ratio=1)
    previous: set[str] | None = None
    for snap in snapshots:
        texts = {f.text for f in snap.facts}
        change = "" if previous is None else f"+{len(texts - previous)} −{len(previous - texts)}"
        hard = sum(f.hard_exception for f in snap.facts)
        table.add_row(str(snap.turn), snap.reason, str(len(snap.facts)), str(hard), change)
        previous = texts
    return table


def _artifacts(artifacts: list[Artifact]) -> Table:
    table = Table(title=f"Artifacts ({len(artifacts)})", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("turn", justify="right", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("from", no_wrap=True)
    table.add_column("label", overflow="fold", ratio=1)
    table.add_column("lines", justify="right", no_wrap=True)
    for a in artifacts:
        kind = f"{a.kind} ({a.language})" if a.language else a.kind
        table.add_row(str(a.turn), kind, a.role, a.label, str(a.content.count("\n") + 1))
    return table


@sessions.command("search")
@_user_options
@click.argument("query")
@click.option("-k", "k", default=5, show_default=True, type=click.IntRange(1, 1000), help="How many results.")
@click.option("--session", "session_id", help="Only this session.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead of a table.")
@run_async
async def search_archive(
    user_id: str, tenant: str, home: Path | None, query: str, k: int, session_id: str | None, as_json: bool
) -> None:
    """Full-text search over the user's past exchanges (every session, or one)."""
    user = UserRef(user_id, tenant)
    async with _engine(home, quiet=as_json) as ms:
        hits = await ms.sessions.search(user, query, limit=k, session_id=session_id)
    if as_json:
        echo_json([{**asdict(h), "text": h.text} for h in hits])
        return
    console = table_console()
    if not hits:
        console.print(f"No past exchange of {user_id} matches {query!r}.")
        return
    console.print(_hits_table(hits, query))


def _hits_table(hits: list[ArchiveHit], query: str) -> Table:
    table = Table(title=f"Past exchanges matching {query!r}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("turn", no_wrap=True, min_width=max(len(h.turn_id) for h in hits))
    table.add_column("when", no_wrap=True)
    table.add_column("exchange", overflow="fold", ratio=1)
    for h in hits:
        table.add_row(
            h.turn_id,
            _when(h.at),
            Text.assemble(("user: ", "dim"), clip(h.user), ("\nassistant: ", "dim"), clip(h.assistant)),
        )
    return table
