"""``memstack sessions list | show | search`` through click, over a data directory filled by the session service."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstack.cli import main
from memstack.engine import AsyncMemstack
from memstack.errors import ProviderTimeout
from memstack.session import OfflineSummarizer, SessionService, SessionSettings, TurnDraft
from memstack.types import Exchange, Fact, Route, UserRef

EXCHANGES = [
    ("Never use semicolons in JavaScript. My name is Dana.", "Understood, Dana: no semicolons."),
    ("Our deadline is Friday.", "Friday it is."),
    ("Write a debounce helper", "Here:\n```js\nfunction debounce(fn, ms) {\n  let t\n  return fn\n}\n```"),
    ("We deploy with Docker Compose.", "Docker Compose, noted."),
]


class TimesOutOnTurnFour(OfflineSummarizer):
    async def summarize_turn(self, exchange: Exchange, base_truth: Sequence[Fact], route: Route) -> TurnDraft:
        if exchange.turn == 4:
            raise ProviderTimeout("the summarizer did not answer")
        return await super().summarize_turn(exchange, base_truth, route)


async def _fill(home: Path) -> None:
    async with AsyncMemstack(home=home, embedder="hash:64") as ms:
        svc = SessionService(ms.store, TimesOutOnTurnFour(), SessionSettings(snapshot_every=2, retry_after_s=3600))
        for user_message, reply in EXCHANGES:
            handle = await svc.begin_turn(UserRef("alice"), "chat-1", agent="coder")
            await svc.finish_turn(handle, user_message, reply)
        handle = await svc.begin_turn(UserRef("alice"), "chat-2")
        await svc.finish_turn(handle, "Hello again", "Hi Dana")
        await svc.end_session(UserRef("alice"), "chat-2")
        await svc.drain(1)


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    asyncio.run(_fill(home))
    runner = CliRunner()
    env = {"MEMSTACK_HOME": str(home), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "160"}

    def invoke(*args: str) -> Result:
        return runner.invoke(main, list(args), env=env, catch_exceptions=False)

    return invoke


def test_list_shows_sessions_newest_first_with_flags_and_lines(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("sessions", "list", "--user", "alice")
    assert result.exit_code == 0, result.output
    assert result.output.index("chat-2") < result.output.index("chat-1")
    assert "coder" in result.output and "Hello again" in result.output  # chat-2's cross-session line
    rows = json.loads(cli("sessions", "list", "-u", "alice", "--json").output)
    assert [(r["session_id"], r["turn_count"], r["flagged"]) for r in rows] == [("chat-2", 1, 0), ("chat-1", 4, 1)]
    assert rows[0]["ended_at"] is not None and rows[1]["ended_at"] is None
    assert cli("sessions", "list", "-u", "bob").stdout.strip() == "bob has no sessions."


def test_show_has_every_part_of_session_memory(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("sessions", "show", "chat-1", "--user", "alice")
    assert result.exit_code == 0, result.output
    out = result.output
    for part in ("session chat-1", "Base truth: ", "Turn log (4 turns)", "Raw window (6 messages)", "Flagged turns: 1"):
        assert part in out
    assert "HARD" in out and "Constraint: never use semicolons in JavaScript" in out
    assert "Deadline: Friday" in out and "unsummarized" in out and "the summarizer did not answer" in out
    assert "periodic" in out and "Artifacts (1)" in out and "debounce" in out
    last_two = cli("sessions", "show", "chat-1", "-u", "alice", "--turns", "2").output
    assert "Turn log (last 2 of 4 turns)" in last_two


def test_show_json(cli) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("sessions", "show", "chat-1", "-u", "alice", "--json").output)
    assert data["session"]["session_id"] == "chat-1" and data["session"]["agent"] == "coder"
    hard = [f["text"] for f in data["base_truth"] if f["hard_exception"]]
    assert hard == ["Constraint: never use semicolons in JavaScript"]
    assert [t["turn"] for t in data["turns"]] == [1, 2, 3, 4]
    assert [(t["turn"], t["status"]) for t in data["flagged"]] == [(4, "unsummarized")]
    assert [m["turn"] for m in data["raw_window"]] == [2, 2, 3, 3, 4, 4]
    assert [s["turn"] for s in data["snapshots"]] == [2, 4] and data["artifacts"][0]["label"] == "debounce"


def test_search_and_errors(cli) -> None:  # type: ignore[no-untyped-def]
    hits = json.loads(cli("sessions", "search", "docker", "-u", "alice", "--json").output)
    assert [h["turn_id"] for h in hits] == ["chat-1:4"] and "Docker Compose" in hits[0]["text"]
    assert "chat-1:4" in cli("sessions", "search", "docker", "-u", "alice").output
    assert "No past exchange" in cli("sessions", "search", "docker", "-u", "bob").output
    missing = cli("sessions", "show", "nope", "--user", "alice")
    assert missing.exit_code == 1 and "Traceback" not in missing.output
    error = missing.stderr.strip().splitlines()[-1]  # after the line naming the store
    assert error.startswith("Error: no session 'nope'") and "memstack sessions list" in error
    other = cli("sessions", "show", "chat-1", "--user", "bob")
    assert other.exit_code == 1 and "no session 'chat-1'" in other.output  # another user's session is not visible


def test_show_piped_is_one_short_line_per_row(tmp_path: Path) -> None:
    """A 30,000-character message made a 30,000-character line when piped; now each row is one line with a line's
    worth of each text (its length said), and ``--full`` shows the whole text, still one line per row."""
    long = "We keep bees by the old apple tree.\nThey like the lavender. " + "More about the hives. " * 1350

    async def fill() -> None:
        async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
            svc = SessionService(ms.store, OfflineSummarizer(), SessionSettings())
            handle = await svc.begin_turn(UserRef("alice"), "bees")
            await svc.finish_turn(handle, long, "Noted: the bees.")

    asyncio.run(fill())
    env = {"MEMSTACK_HOME": str(tmp_path), "MEMSTACK_EMBEDDER": "hash:64"}
    shown = CliRunner().invoke(main, ["sessions", "show", "bees", "-u", "alice"], env=env).stdout
    lines = shown.splitlines()
    assert max(len(line) for line in lines) < 400, max(len(line) for line in lines)
    row = next(line for line in lines if "We keep bees" in line and " user " in line)  # the raw window's
    assert "We keep bees by the old apple tree. ⏎ They like the lavender." in row
    assert row.rstrip().endswith(f"… ({len(long)} characters)")
    full = CliRunner().invoke(main, ["sessions", "show", "bees", "-u", "alice", "--full"], env=env).stdout
    assert full.count("More about the hives.") >= 1350 and "characters)" not in full  # all of it
