"""What scripts read from the CLI: with ``--json`` the output ends with exactly one line of JSON (the whole result,
never an indented document), and tables printed to a pipe never cut an id, however narrow ``COLUMNS`` says it is."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from memstack.cli import main

CLI = Path(__file__).resolve().parents[2] / "src" / "memstack" / "cli"
Invoke = Callable[..., Result]


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Invoke]:
    runner = CliRunner()
    env = {"MEMSTACK_HOME": str(tmp_path / "home"), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "40"}

    def invoke(*args: str, input: str | None = None) -> Result:
        result = runner.invoke(main, list(args), env=env, input=input, catch_exceptions=False)
        assert result.exit_code == 0, (args, result.output)
        return result

    yield invoke


def _json_commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[str]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _json_commands(command, (*path, name))
        elif any("--json" in p.opts for p in command.params if isinstance(p, click.Option)):
            yield " ".join((*path, name))


def _last_json(result: Result) -> Any:
    lines = result.stdout.splitlines()
    assert lines, result.output
    return json.loads(lines[-1])


#: The commands with --json run here; the measuring ones (bench, eval: long runs, data files) have tests of their own
#: that parse the last line, and the source check below holds them to the same printer.
_RUN_ELSEWHERE = {
    "bench capture": "tests/capture/test_bench_capture.py",
    "bench chat": "tests/server/test_bench_chat.py",
    "bench context": "tests/context/test_cli.py",
    "bench erase": "tests/test_bench.py",
    "bench freshness": "tests/test_bench_writes.py",
    "bench http": "tests/server/test_bench_http.py",
    "bench ingest": "tests/test_bench_writes.py",
    "bench plans": "needs PostgreSQL with pg_stat_statements; its workload runs in tests/store/test_shard_keys.py",
    "bench retrieval": "tests/test_bench.py",
    "bench session-memory": "tests/test_bench_session_memory.py",
    "bench sessions": "tests/engine/test_admission.py",
    "bench startup": "tests/cli/test_startup.py",
    "bench turn": "tests/engine/test_cli.py",
    "context scan": "tests/context/test_cli.py",
    "eval answers": "tests/evals/test_answers.py",
    "eval capture": "tests/evals/test_eval_capture.py",
    "eval dedup": "tests/evals/test_eval_commands.py",
    "eval extraction": "tests/evals/test_eval_commands.py",
    "eval guard": "tests/evals/test_eval_guard.py",
    "eval locomo": "tests/retrieval/test_locomo_eval.py",
    "eval memories": "tests/evals/test_eval_commands.py",
    "eval supersedes": "tests/evals/test_eval_commands.py",
    "eval temporal": "tests/evals/test_eval_temporal.py",
    "eval updates": "tests/evals/test_eval_updates.py",
    "reembed": "tests/cli/test_reembed_cli.py",
    "users delete": "tests/cli/test_users_cli.py",
    "users export": "tests/cli/test_users_cli.py",
    "users import": "tests/cli/test_users_cli.py",
    "webhooks create": "tests/webhooks/test_cli.py",
    "webhooks list": "tests/webhooks/test_cli.py",
    "webhooks deliveries": "tests/webhooks/test_cli.py",
}


def test_every_json_command_prints_exactly_one_json_line(cli: Invoke, tmp_path: Path) -> None:
    added = _last_json(cli("memories", "add", "--user", "ana", "User keeps bees", "--json"))
    assert added["content"] == "User keeps bees"
    cli("chat", "--user", "ana", input="I keep bees in my garden.\n")
    session = _last_json(cli("sessions", "list", "--user", "ana", "--json"))[0]["session_id"]
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"message": "hello", "memories": ["User keeps bees"]}))
    runs = {
        "memories list": ("memories", "list", "--user", "ana"),
        "memories search": ("memories", "search", "--user", "ana", "bees"),
        "memories history": ("memories", "history", "--user", "ana", added["id"]),
        "memories add": ("memories", "add", "--user", "ana", "User hums while working"),
        "memories edit": ("memories", "edit", "--user", "ana", added["id"], "--content", "User keeps many bees"),
        "memories forget": ("memories", "forget", "--user", "ana", "--about", "bees", "--dry-run"),
        "keys create": ("keys", "create", "--tenant", "acme"),
        "keys list": ("keys", "list"),
        "sessions list": ("sessions", "list", "--user", "ana"),
        "sessions show": ("sessions", "show", "--user", "ana", session),
        "sessions search": ("sessions", "search", "--user", "ana", "garden"),
        "context list": ("context", "list", "--user", "ana"),
        "context explain": ("context", "explain", "--user", "ana"),
        "context render": ("context", "render", "--request", str(request), "--rules-only"),
    }
    assert set(_json_commands(main)) == set(runs) | set(_RUN_ELSEWHERE), "a --json command is not covered here"
    for name, args in runs.items():
        result = cli(*args, "--json")
        lines = result.stdout.splitlines()
        assert len(lines) == 1, (name, result.stdout[:500])
        json.loads(lines[0])


def _json_prints(path: Path) -> list[str]:
    """Calls that print JSON some other way than ``echo_json`` (the one printer) or ``emit`` (progress lines)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("json.dumps", "json.dump"):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_the_cli_prints_json_only_through_one_printer() -> None:
    allowed = {
        "_common.py": 1,  # echo_json itself
        "answers.py": 1,  # the per-question JSONL file, not stdout
        "eval.py": 2,  # the human-readable detail printed without --json
        "mcp.py": 1,  # --print-config: an indented block to paste into an MCP client's configuration
    }
    wrong = []
    for path in sorted(CLI.glob("*.py")):
        prints = _json_prints(path)
        if len(prints) != allowed.get(path.name, 0):
            wrong.extend(prints or [f"{path.name}: expected {allowed.get(path.name, 0)} json.dumps calls"])
    assert not wrong, "\n".join(wrong)


def test_piped_tables_keep_whole_ids(cli: Invoke) -> None:
    long_text = "User describes a very long hobby " + "in great detail " * 12
    memory = _last_json(cli("memories", "add", "--user", "someone-with-a-long-name", long_text, "--json"))["id"]
    cli("chat", "--user", "someone-with-a-long-name", input="I keep bees in my garden.\n")
    key = _last_json(cli("keys", "create", "--tenant", "a-tenant-with-a-long-name", "--json"))["id"]
    outputs = {
        "memories list": cli("memories", "list", "--user", "someone-with-a-long-name").stdout,
        "memories search": cli("memories", "search", "--user", "someone-with-a-long-name", "hobby").stdout,
        "keys list": cli("keys", "list").stdout,
        "sessions list": cli("sessions", "list", "--user", "someone-with-a-long-name").stdout,
        "context list": cli("context", "list", "--user", "someone-with-a-long-name").stdout,
    }
    ids = {
        "memories list": [memory],
        "memories search": [memory],
        "keys list": [key],
        "sessions list": re.findall(r"ses_\w{26}", outputs["sessions list"]),
        "context list": re.findall(r"ctx_\w{26}", outputs["context list"]),
    }
    for name, output in outputs.items():
        assert "…" not in re.sub(r"msk_\S+…", "", output), (name, output)  # a key's prefix is shown cut on purpose
        assert ids[name] and all(i in output for i in ids[name]), (name, output)
    row = next(line for line in outputs["memories list"].splitlines() if memory in line)
    assert long_text.strip() in row  # piped: one line per row, nothing wrapped


def test_keys_create_quiet_prints_only_the_secret(cli: Invoke) -> None:
    lines = cli("keys", "create", "--tenant", "acme", "--quiet").stdout.splitlines()
    assert len(lines) == 1 and re.fullmatch(r"msk_\S+", lines[0])


def test_explain_without_an_id_shows_the_users_latest_context(cli: Invoke) -> None:
    cli("chat", "--user", "ana", input="I keep bees in my garden.\nThey are calm.\n")
    latest = _last_json(cli("context", "list", "--user", "ana", "--json"))["contexts"][0]["context_id"]
    assert _last_json(cli("context", "explain", "--user", "ana", "--json"))["context_id"] == latest


def test_explain_shows_the_text_the_model_saw(cli: Invoke) -> None:
    long = "I keep bees in my garden. " + "They like the lavender by the fence. " * 20
    cli("chat", "--user", "ana", input=f"{long}\n")
    shown = cli("context", "explain", "--user", "ana").stdout
    row = next(line for line in shown.splitlines() if "message:current" in line)
    assert "I keep bees in my garden." in row and "…" in row  # one line, cut
    assert long.strip() not in shown
    assert long.strip() in cli("context", "explain", "--user", "ana", "--full").stdout.replace("\n", "")
    entries = _last_json(cli("context", "explain", "--user", "ana", "--json"))["entries"]
    assert next(e for e in entries if e["layer"] == "current")["text"] == long.strip()
