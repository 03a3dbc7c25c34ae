"""``memstack users export`` and ``memstack users delete`` end to end through click, on a temporary data directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memstack.cli import main
from memstack.users import EXPORT_FORMAT, EXPORT_VERSION


@pytest.fixture
def cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    env = {"MEMSTACK_HOME": str(tmp_path / "home"), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "120"}

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(main, list(args), env=env, input=input, catch_exceptions=False)

    return invoke


def _add(cli, user: str, content: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("memories", "add", "--user", user, content)
    assert result.exit_code == 0, result.output


def test_export_to_stdout_and_to_a_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _add(cli, "alice", "Prefers green tea")
    _add(cli, "bob", "Plays the oboe")
    result = cli("users", "export", "--user", "alice")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # the store is named on stderr
    assert (document["format"], document["version"]) == (EXPORT_FORMAT, EXPORT_VERSION)
    assert [m["content"] for m in document["memories"]] == ["Prefers green tea"]
    assert document["memories"][0]["history"][0]["action"] == "create"
    assert document["sessions"] == [] and document["contexts"] == []

    out = tmp_path / "alice.json"
    result = cli("users", "export", "--user", "alice", "--output", str(out), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert summary["memories"] == 1 and summary["sessions"] == 0 and summary["output"] == str(out)
    assert json.loads(out.read_text())["memories"][0]["content"] == "Prefers green tea"
    assert not out.with_name("alice.json.partial").exists()

    never = json.loads(cli("users", "export", "--user", "nobody").stdout)
    assert [never[k] for k in ("memories", "sessions", "contexts", "jobs")] == [[], [], [], []]


def test_delete_asks_then_erases_and_reports(cli) -> None:  # type: ignore[no-untyped-def]
    _add(cli, "alice", "Prefers green tea")
    _add(cli, "bob", "Plays the oboe")
    refused = cli("users", "delete", "--user", "alice", input="n\n")
    assert refused.exit_code == 1 and "Aborted" in refused.output
    assert len(json.loads(cli("memories", "list", "--user", "alice", "--json").output)) == 1

    result = cli("users", "delete", "--user", "alice", input="y\n")
    assert result.exit_code == 0, result.output
    assert "Erased alice (default)" in result.output and "memories: 1" in result.output
    assert json.loads(cli("memories", "list", "--user", "alice", "--json", "--deleted").output) == []
    assert len(json.loads(cli("memories", "list", "--user", "bob", "--json").output)) == 1

    again = cli("users", "delete", "--user", "alice", "--yes", "--json")
    assert again.exit_code == 0
    report = json.loads(again.output.strip().splitlines()[-1])
    assert report["total"] == 0 and report["user_id"] == "alice" and "memories" in report["removed"]


def test_bad_user_id_is_one_clean_error(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("users", "delete", "--user", "a\x00b", "--yes")
    assert result.exit_code != 0 and "Traceback" not in result.output


DATA = Path(__file__).parents[1] / "imports" / "data"


def test_export_then_import_into_another_store(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _add(cli, "alice", "Prefers green tea")
    exported = tmp_path / "alice.json"
    assert cli("users", "export", "--user", "alice", "--output", str(exported)).exit_code == 0
    document = json.loads(exported.read_text())
    runner = CliRunner()
    other = {"MEMSTACK_HOME": str(tmp_path / "other"), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "120"}

    def elsewhere(*args: str) -> Result:
        return runner.invoke(main, list(args), env=other, catch_exceptions=False)

    result = elsewhere("users", "import", str(exported))
    assert result.exit_code == 0, result.output
    assert "Imported alice (default): 1 memories, 1 memory_history" in result.stdout
    again = json.loads(elsewhere("users", "export", "--user", "alice").stdout)
    assert {**again, "exported_at": document["exported_at"]} == document
    result = elsewhere("users", "import", str(exported), "--json")
    assert json.loads(result.stdout.splitlines()[-1])["users"][0]["unchanged"] is True

    # cut short: one line saying what to do, exit status 1, nothing written
    cut = tmp_path / "cut.json"
    cut.write_text(exported.read_text()[:100])
    result = elsewhere("users", "import", str(cut))
    assert result.exit_code == 1 and "cut short" in result.output and "Traceback" not in result.output
    assert "Prefers green tea" in elsewhere("memories", "list", "--user", "alice").stdout


def test_import_from_mem0_and_jsonl(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("users", "import", "--from", "mem0", str(DATA / "mem0-get-all.json"))
    assert result.exit_code == 0, result.output
    assert "Imported ana (default): 2 memories" in result.stdout
    assert "already imported" in cli("users", "import", "--from", "mem0", str(DATA / "mem0-get-all.json")).stdout
    listed = cli("memories", "list", "--user", "ben", "--json")
    assert "Works night shifts as a nurse" in listed.stdout
    result = cli("users", "import", "--from", "jsonl", str(DATA / "messages.jsonl"), "--json")
    assert result.exit_code == 0, result.output
    reports = {r["user_id"]: r for r in json.loads(result.stdout.splitlines()[-1])["users"]}
    assert reports["ana"]["added"]["messages"] == 3 and reports["ben"]["added"]["messages"] == 1
    bad = cli("users", "import", "--from", "jsonl", str(DATA / "messages-bad-line.jsonl"))
    assert bad.exit_code == 1 and "line 2" in bad.output
