"""``memstack memories …`` end to end through click, against a temporary data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstack.cli import main


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    env = {"MEMSTACK_HOME": str(tmp_path / "home"), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "120"}

    def invoke(*args: str, input: str | None = None, **extra_env: str) -> Result:
        return runner.invoke(main, list(args), env={**env, **extra_env}, input=input, catch_exceptions=False)

    return invoke


def _ids(cli, *extra: str) -> list[str]:  # type: ignore[no-untyped-def]
    result = cli("memories", "list", "--user", "alice", "--json", *extra)
    assert result.exit_code == 0, result.output
    return [m["id"] for m in json.loads(result.output)]


def _one_line_error(result: Result, text: str) -> None:
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    # One line of error; the other line names the store (stderr).
    lines = [line for line in result.output.splitlines() if line.strip() and not line.startswith("store: ")]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and text in lines[0], result.output


def test_memories_is_a_registered_command(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--help")
    assert result.exit_code == 0 and "memories" in result.output
    result = cli("memories", "--help")
    for command in ("list", "add", "search", "edit", "forget", "restore", "delete", "history"):
        assert command in result.output


def test_adding_a_memory_already_held(cli) -> None:  # type: ignore[no-untyped-def]
    first = cli("memories", "add", "--user", "alice", "Prefers green tea over coffee", "--json")
    memory = json.loads(first.output)
    assert memory["action"] == "created"
    again = cli("memories", "add", "--user", "alice", "prefers green tea over coffee.")
    assert again.exit_code == 0
    assert again.stdout.strip() == (
        f"Already saved {memory['id']} (duplicate): Prefers green tea over coffee; --force to store another"
    )
    as_json = json.loads(cli("memories", "add", "-u", "alice", "Prefers green tea over coffee", "--json").output)
    assert (as_json["action"], as_json["id"], as_json["reason"]) == ("duplicate", memory["id"], "the same text")
    assert len(_ids(cli)) == 1
    forced = cli("memories", "add", "--user", "alice", "Prefers green tea over coffee", "--force")
    assert forced.exit_code == 0 and "Saved mem_" in forced.output and len(_ids(cli)) == 2


def test_add_list_and_search(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    added = cli("memories", "add", "--user", "alice", "Prefers green tea over coffee", "-c", "preference")
    assert (
        added.exit_code == 0
        and "Saved mem_" in added.output
        and "1 of unlimited memories, unlimited tier" in added.output
    )
    cli("memories", "add", "--user", "alice", "Training for the Lisbon marathon", "--category", "goal")
    cli("memories", "add", "--user", "bob", "Bob's own memory")
    assert (tmp_path / "home" / "memstack.db").exists()

    table = cli("memories", "list", "--user", "alice")
    assert table.exit_code == 0
    assert "Prefers green tea over coffee" in table.output and "Lisbon marathon" in table.output
    assert "Bob" not in table.output and "2 of unlimited memories" in table.output
    for memory_id in _ids(cli):
        assert memory_id in table.output  # full ids, never cut

    goals = json.loads(cli("memories", "list", "-u", "alice", "-c", "goal", "--json").output)
    assert [m["content"] for m in goals] == ["Training for the Lisbon marathon"]
    tea = json.loads(cli("memories", "list", "-u", "alice", "--text", "tea", "--json").output)
    assert [m["category"] for m in tea] == ["preference"]

    found = cli("memories", "search", "--user", "alice", "lisbon marathon", "-k", "1", "--json")
    hits = json.loads(found.output)
    assert len(hits) == 1 and hits[0]["content"] == "Training for the Lisbon marathon" and hits[0]["score"] > 0.3
    table = cli("memories", "search", "--user", "alice", "green tea")
    assert table.exit_code == 0 and "score" in table.output and "Prefers green tea" in table.output


def test_forget_everything_about_something_after_a_preview(cli) -> None:  # type: ignore[no-untyped-def]
    for text in ("User has a cat named Miso", "Miso is afraid of the vacuum", "User is learning Portuguese"):
        cli("memories", "add", "--user", "alice", text)
    preview = cli("memories", "forget", "--user", "alice", "--about", "everything about my cat", "--dry-run")
    assert preview.exit_code == 0, preview.output
    assert "Miso is afraid of the vacuum" in preview.output and "Portuguese" not in preview.output
    assert len(_ids(cli)) == 3  # a preview changes nothing
    declined = cli("memories", "forget", "--user", "alice", "--about", "my cat", input="n\n")
    assert declined.exit_code == 1 and "Forget these 2 memories" in declined.output and len(_ids(cli)) == 3
    done = cli("memories", "forget", "--user", "alice", "--about", "my cat", input="y\n")
    assert done.exit_code == 0 and "Forgot 2 memories" in done.output
    remaining = json.loads(cli("memories", "list", "--user", "alice", "--json").output)
    assert [m["content"] for m in remaining] == ["User is learning Portuguese"]
    nothing = json.loads(cli("memories", "forget", "-u", "alice", "--about", "my motorbike", "--json").output)
    assert nothing["memories"] == [] and nothing["dry_run"] is True
    both = cli("memories", "forget", "--user", "alice", "mem_x", "--about", "cats")
    assert both.exit_code == 2 and "name one memory (MEMORY_ID) or what to forget everything about" in both.output


def test_edit_forget_restore_delete_and_history(cli) -> None:  # type: ignore[no-untyped-def]
    cli("memories", "add", "--user", "alice", "Lives in Porto")
    (memory_id,) = _ids(cli)

    edited = cli("memories", "edit", "--user", "alice", memory_id, "--content", "Lives in Lisbon", "-c", "fact")
    assert edited.exit_code == 0 and "Lives in Lisbon" in edited.output

    forgot = cli("memories", "forget", "--user", "alice", memory_id)
    assert forgot.exit_code == 0 and f"memstack memories restore --user alice {memory_id}" in forgot.output
    assert _ids(cli) == [] and _ids(cli, "--deleted") == [memory_id]
    assert "forgotten" in cli("memories", "list", "--user", "alice", "--deleted").output

    restored = cli("memories", "restore", "--user", "alice", memory_id)
    assert restored.exit_code == 0 and _ids(cli) == [memory_id]

    kept = cli("memories", "delete", "--user", "alice", memory_id, input="n\n")
    assert kept.exit_code == 1 and _ids(cli) == [memory_id]  # answering no aborts
    gone = cli("memories", "delete", "--user", "alice", memory_id, input="y\n")
    assert gone.exit_code == 0 and "permanently" in gone.output and _ids(cli, "--deleted") == []

    history = cli("memories", "history", "--user", "alice", memory_id)
    assert history.exit_code == 0
    for action in ("create", "update", "forget", "restore", "delete"):
        assert action in history.output
    assert "Lives in Porto → Lives in Lisbon" in history.output
    events = json.loads(cli("memories", "history", "--user", "alice", memory_id, "--json").output)
    assert [e["action"] for e in events] == ["create", "update", "forget", "restore", "delete"]


def test_tenants_are_separate(cli) -> None:  # type: ignore[no-untyped-def]
    cli("memories", "add", "--user", "alice", "--tenant", "acme", "Works at Acme")
    assert _ids(cli) == []
    acme = cli("memories", "list", "--user", "alice", "--tenant", "acme", "--json")
    assert [m["tenant"] for m in json.loads(acme.output)] == ["acme"]


def test_errors_are_one_clear_line(cli) -> None:  # type: ignore[no-untyped-def]
    _one_line_error(cli("memories", "forget", "--user", "alice", "mem_missing"), "no memory 'mem_missing'")
    _one_line_error(cli("memories", "history", "--user", "alice", "mem_missing"), "memstack memories list")
    _one_line_error(cli("memories", "add", "--user", "alice", "x", "-c", "food"), "unknown category 'food'")
    _one_line_error(cli("memories", "add", "--user", "alice", "   "), "empty")
    _one_line_error(cli("memories", "add", "--user", "alice", "x" * 3000), "the limit is 2000")
    _one_line_error(cli("memories", "edit", "--user", "alice", "mem_missing"), "nothing to change")
    limits = {"MEMSTACK_TIER_LIMITS": "free=1,premium=unlimited"}
    _one_line_error(cli("memories", "add", "--user", "alice", "x", "--tier", "gold", **limits), "unknown tier 'gold'")
    assert cli("memories", "add", "--user", "alice", "first", **limits).exit_code == 0
    _one_line_error(cli("memories", "add", "--user", "alice", "second", **limits), "free tier keeps at most 1")
    assert cli("memories", "add", "--user", "alice", "second", "--tier", "premium", **limits).exit_code == 0
    assert len(_ids(cli)) == 2


def test_a_database_of_another_embedding_model_says_to_reembed(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("memories", "add", "--user", "alice", "x").exit_code == 0
    other = cli("memories", "list", "--user", "alice", MEMSTACK_EMBEDDER="hash:32")
    _one_line_error(other, "memstack reembed")


def test_empty_lists_say_so(cli) -> None:  # type: ignore[no-untyped-def]
    assert "alice has no memories" in cli("memories", "list", "--user", "alice").output
    assert "no memories to search" in cli("memories", "search", "--user", "alice", "anything").output


def test_list_and_search_as_of_a_past_time(cli) -> None:  # type: ignore[no-untyped-def]
    past = cli(
        "memories", "add", "-u", "alice", "Lives in Paris", "--valid-from", "2015-01-01", "--valid-to", "2022-03-01"
    )
    assert past.exit_code == 0, past.output
    cli("memories", "add", "-u", "alice", "Lives in Berlin", "--valid-from", "2022-03-01")
    now = json.loads(cli("memories", "list", "-u", "alice", "--json").output)
    then = json.loads(cli("memories", "list", "-u", "alice", "--json", "--as-of", "2019-06-01").output)
    assert [m["content"] for m in now] == ["Lives in Berlin"] and [m["content"] for m in then] == ["Lives in Paris"]
    assert then[0]["valid_to"] == "2022-03-01T00:00:00+00:00"
    found = json.loads(cli("memories", "search", "-u", "alice", "Paris", "--json", "--as-of", "2019-06-01").output)
    assert [m["content"] for m in found] == ["Lives in Paris"]
    table = cli("memories", "list", "-u", "alice", "--deleted")
    assert "March 2022" in table.output  # a past fact says when it held
    bad = cli("memories", "list", "-u", "alice", "--as-of", "last tuesday")
    assert bad.exit_code == 2 and "ISO 8601" in bad.output
    _one_line_error(cli("memories", "search", "-u", "alice", "Paris", "--as-of", "9999-01-01"), "as_of must be")
    _one_line_error(
        cli(
            "memories", "add", "-u", "alice", "Lives in Rome", "--valid-from", "2024-01-01", "--valid-to", "2023-01-01"
        ),
        "valid_to",
    )
