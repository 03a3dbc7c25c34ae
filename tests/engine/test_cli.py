"""``memstack chat`` and ``memstack demo`` through click, against temporary data directories."""

from __future__ import annotations

import json
import re
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstack.cli import main
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer


def _run(tmp_path: Path, args: list[str], stdin: str, **env: str) -> Result:
    base = {"MEMSTACK_HOME": str(tmp_path / "home"), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "120"}
    return CliRunner().invoke(main, args, env={**base, **env}, input=stdin, catch_exceptions=False)


def test_offline_chat_with_badge_memories_explain_and_forget(tmp_path: Path) -> None:
    stdin = (
        "I prefer short answers with examples.\n/memories\n/explain\n/forget short answers\nn\n/memories\n"
        "/forget short answers\ny\n/memories\n/quit\n"
    )
    result = _run(tmp_path, ["chat", "--user", "ana", "--timezone", "Europe/Paris"], stdin)
    out = result.output
    assert result.exit_code == 0, out
    assert "memstack chat as ana (offline:responder)" in out and "not an AI answer" in out
    assert "✓ Memory saved (preference) User prefers short answers with examples." in out
    assert out.count("User prefers short answers with examples.") >= 5  # badge, /memories, previews, /forget
    assert "forget this? [y/N]" in out and "nothing forgotten" in out  # the first preview was declined
    assert "What the model saw:" in out and "current" in out and "context ctx_" in out
    assert "forgot User prefers short answers with examples." in out and "nothing remembered yet" in out
    with sqlite3.connect(tmp_path / "home" / "memstack.db") as conn:
        assert conn.execute("SELECT deleted_by FROM memories").fetchall() == [("user",)]
        assert conn.execute("SELECT count(*) FROM session_turns").fetchone() == (1,)


def test_news_that_replaces_a_memory_shows_the_memory_updated_badge(tmp_path: Path) -> None:
    stdin = "Remember that I live in Porto.\nRemember that I moved to Lisbon.\n/memories\n/quit\n"
    result = _run(tmp_path, ["chat", "--user", "ana"], stdin)
    assert result.exit_code == 0, result.output
    assert "✓ Memory saved (fact) User lives in Porto." in result.output
    assert "✓ Memory updated (fact) User moved to Lisbon." in result.output
    with sqlite3.connect(tmp_path / "home" / "memstack.db") as conn:
        assert conn.execute("SELECT content FROM memories WHERE is_active").fetchall() == [("User moved to Lisbon.",)]


def test_a_full_tier_says_what_it_did_not_save(tmp_path: Path) -> None:
    """Issue 23: a capture the limit stops is reported under the reply, never dropped silently."""
    stdin = "I'm vegetarian.\nI live in Lisbon.\nRemember that I have a cat.\n/quit\n"
    result = _run(tmp_path, ["chat", "--user", "ana"], stdin, MEMSTACK_TIER_LIMITS="free=1,pro=unlimited")
    out = result.output
    assert result.exit_code == 0, out
    assert "✓ Memory saved (preference) User is vegetarian." in out
    assert "! Memory full, not saved: the free tier keeps at most 1 memories: User lives in Lisbon." in out
    assert "You've reached the 1-memory limit of the free plan." in out  # the explicit one: the upgrade prompt


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    result = _run(tmp_path, ["chat", "--user", "ana", "--timezone", "Nowhere/Land"], "hello\n/quit\n")
    assert result.exit_code == 0 and "Error: unknown time zone 'Nowhere/Land'" in result.output
    result = _run(tmp_path, ["chat", "--user", "ana", "--agent", str(tmp_path / "missing.yaml")], "hi\n")
    assert "Error: cannot read agent file" in result.output


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def test_chat_streams_a_configured_model_and_keeps_the_session(tmp_path: Path, server: ScriptedOpenAIServer) -> None:
    server.script("chat", Reply.text("Hello Ana, nice to meet you."), Reply.text("You told me your name."))
    agent = tmp_path / "tutor.yaml"
    agent.write_text("name: tutor\ncore:\n  identity: You are a patient tutor.\ntools: []\n")
    env = {"MEMSTACK_CHAT_MODEL": "custom:chat", "MEMSTACK_CUSTOM_BASE_URL": server.base_url}
    result = _run(tmp_path, ["chat", "-u", "ana", "--agent", str(agent)], "Hi, I'm Ana.\nWho am I?\n/quit\n", **env)
    assert result.exit_code == 0, result.output
    assert "(custom:chat)" in result.output and "Hello Ana, nice to meet you." in result.output
    first, second = server.chat_requests
    assert first.stream and second.stream and "You are a patient tutor." in first.messages[0]["content"]
    assert [m["content"] for m in second.messages[1:]] == ["Hi, I'm Ana.", "Hello Ana, nice to meet you.", "Who am I?"]


@pytest.mark.slow  # loads the real embedding model: about 7 s
def test_demo_walks_through_every_mechanism(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["demo"], env={"COLUMNS": "120", "MEMSTACK_CHAT_MODEL": "openai:gpt-4o"})
    out = result.output
    assert result.exit_code == 0, out
    for step in ("1. Capture", "2. Dedup", "3. Retrieval", "4. Injection", "5. Trimming", "6. Temporary chat"):
        assert step in out
    assert out.count("✓ Memory saved") == 3  # the environment's model string is ignored: fully offline
    assert "= already remembered: User prefers short explanations with concrete examples." in out
    assert (
        "(schedule) User's organic chemistry midterm is next Thursday (said on" in out
        and "Your recent conversations (1)" in out
    )
    assert "✗ not remembered (reads as an instruction to the assistant)" in out
    assert "quarantined memory:mem_" in out and "[override" in out
    assert "trimmed thread:0:user: trimmed to fit the token budget" in out
    assert "context stored: False; memory used: False" in out
    home = re.search(r"memstack-demo-\w+", out)
    assert home is not None and not (Path(tempfile.gettempdir()) / home.group(0)).exists()  # cleaned up


def test_bench_turn_prints_one_json_line(tmp_path: Path) -> None:
    args = ["bench", "turn", "--turns", "3", "--save-turns", "2", "--memories", "5", "--embedder", "hash:64"]
    result = _run(tmp_path, [*args, "--cold-users", "2", "--first-runs", "1", "--json"], "")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.strip().splitlines()[-1])
    assert list(figures) == TURN_KEYS
    assert figures["turns"] == 3 and figures["memories"] == 5 and figures["embedder"] == "hash:64"
    assert figures["backend"] == "sqlite" and figures["save_turns"] == 2
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert 0 < figures["save_p50_ms"] <= figures["save_p99_ms"] <= figures["save_max_ms"]
    # a user's first turn, of each kind, and the engine's first turn in a process of its own
    assert figures["cold_users"] == 2 and 0 < figures["cold_p50_ms"] <= figures["cold_p99_ms"]
    assert 0 < figures["save_cold_p50_ms"] <= figures["save_cold_p99_ms"]
    assert figures["first_ms"] > 0 and len(figures["first_runs_ms"]) == 1 and figures["open_ms"] > 0
    assert 0 <= figures["saved"] <= 2 and 0 <= figures["save_cold_saved"] <= 2  # counts, whatever hash:64 reads
    assert figures["no_save_saved"] == 0
    assert figures["limit_embed_p50_ms"] > 0 and figures["p50_over_limit"] > 0
    # where the time went: every stage of every group, shares of the chat call that add up to it
    assert set(figures["stages"]) == set(figures["stages_ms"]) == {"warm", "cold", "save", "save_cold", "first"}
    for group, shares in figures["stages"].items():
        assert list(shares) == STAGES, group
        assert all(share >= 0 for share in shares.values()) and abs(sum(shares.values()) - 1) < 0.01, group
    for key in ("load_avg", "load_avg_start", "load_avg_end"):
        assert figures[key] is None or figures[key] >= 0
    assert figures["gc_freeze_s"] == 10.0  # the collector kept as `memstack serve` keeps it


TURN_KEYS = [
    "turns", "memories", "embedder", "guard", "backend", "p50_ms", "p99_ms", "max_ms", "cold_users", "first_ms",
    "cold_p50_ms", "cold_p99_ms", "save_turns", "save_p50_ms", "save_p99_ms", "save_max_ms", "saved", "no_save_saved",
    "save_cold_p50_ms", "save_cold_p99_ms", "save_cold_saved", "first_runs_ms", "open_ms", "limit_embed_p50_ms",
    "p50_over_limit", "save_p50_over_limit", "stages", "stages_ms", "load_avg", "load_avg_start", "load_avg_end",
    "gc_freeze_s",
]  # fmt: skip
STAGES = [
    "session", "queue", "embed", "recall", "guard", "assemble", "model", "write", "detection", "other", "outside"
]  # fmt: skip
