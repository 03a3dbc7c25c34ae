"""Which store a command uses is never a surprise: every command that reads or writes it names it (on stderr, so
piped output stays clean; not with ``--json``), and with nothing set the store is the same from any directory (the
per-user one) unless the directory has its own ``.memstack``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from memstack.cli import main
from memstack.config import Config


def _home_commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[str]:
    """Every command with a ``--home`` option: the ones that open the store."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _home_commands(command, (*path, name))
        elif any("--home" in p.opts for p in command.params if isinstance(p, click.Option)):
            yield " ".join((*path, name))


MESSAGES = Path(__file__).parent.parent / "imports" / "data" / "messages.jsonl"

#: How each is run here; ``--json`` is added to the ones marked True to check that it stays quiet then.
RUNS: dict[str, tuple[tuple[str, ...], bool]] = {
    "chat": (("chat", "--user", "ana"), False),
    "context explain": (("context", "explain", "--user", "ana"), True),
    "context list": (("context", "list", "--user", "ana"), True),
    "keys create": (("keys", "create", "--tenant", "acme"), True),
    "keys list": (("keys", "list"), True),
    "keys revoke": (("keys", "revoke", "key_nope"), False),
    "memories add": (("memories", "add", "--user", "ana", "User keeps bees"), True),
    "memories delete": (("memories", "delete", "--user", "ana", "mem_nope", "--yes"), False),
    "memories edit": (("memories", "edit", "--user", "ana", "mem_nope", "--content", "x"), True),
    "memories forget": (("memories", "forget", "--user", "ana", "--about", "bees", "--dry-run"), True),
    "memories history": (("memories", "history", "--user", "ana", "mem_nope"), True),
    "memories list": (("memories", "list", "--user", "ana"), True),
    "memories restore": (("memories", "restore", "--user", "ana", "mem_nope"), False),
    "memories search": (("memories", "search", "--user", "ana", "bees"), True),
    "reembed": (("reembed", "--to", "hash:64"), True),
    "sessions list": (("sessions", "list", "--user", "ana"), True),
    "sessions search": (("sessions", "search", "--user", "ana", "bees"), True),
    "sessions show": (("sessions", "show", "--user", "ana", "ses_nope"), True),
    "users delete": (("users", "delete", "--user", "ana", "--yes"), True),
    "users export": (("users", "export", "--user", "ana"), False),
    "users import": (("users", "import", "--from", "jsonl", str(MESSAGES)), True),
    "webhooks create": (("webhooks", "create", "http://127.0.0.1:9/hook"), True),
    "webhooks list": (("webhooks", "list"), True),
    "webhooks update": (("webhooks", "update", "whk_nope", "--disable"), False),
    "webhooks delete": (("webhooks", "delete", "whk_nope"), False),
    "webhooks deliveries": (("webhooks", "deliveries", "whk_nope"), False),
    "webhooks replay": (("webhooks", "replay", "dlv_nope"), False),
    "webhooks deliver": (("webhooks", "deliver"), False),
}
#: Long-running servers: they name their store in their start line, tested with them.
ELSEWHERE = {"serve": "tests/server/test_serve.py", "mcp": "tests/test_mcp.py"}


def _run(args: tuple[str, ...], **env: str | None) -> Result:
    return CliRunner().invoke(main, list(args), env={"MEMSTACK_EMBEDDER": "hash:64", **env}, input="/quit\n")


def test_every_command_that_opens_the_store_names_it(tmp_path: Path) -> None:
    assert set(_home_commands(main)) == set(RUNS) | set(ELSEWHERE), "a command with --home is not covered here"
    home = tmp_path / "data"
    named = f"store: {home} ($MEMSTACK_HOME)"
    for name, (args, has_json) in RUNS.items():
        result = _run(args, MEMSTACK_HOME=str(home))
        assert named in result.stderr.splitlines(), (name, result.output)
        assert named not in result.stdout, name  # stdout stays what a script reads
        if has_json:
            quiet = _run((*args, "--json"), MEMSTACK_HOME=str(home))
            assert "store:" not in quiet.output, (name, quiet.output)
    flag = _run(("memories", "list", "--user", "ana", "--home", str(tmp_path / "other")), MEMSTACK_HOME=str(home))
    assert f"store: {tmp_path / 'other'} (--home)" in flag.stderr


def test_with_nothing_set_the_store_is_the_users_own_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xdg, first, second = tmp_path / "xdg", tmp_path / "project", tmp_path / "elsewhere"
    first.mkdir()
    second.mkdir()
    env = {"MEMSTACK_HOME": None, "MEMSTACK_DATABASE_URL": None, "XDG_DATA_HOME": str(xdg)}
    monkeypatch.chdir(first)
    added = _run(("memories", "add", "--user", "alice", "User keeps bees", "--json"), **env)
    assert added.exit_code == 0, added.output
    monkeypatch.chdir(second)
    listed = _run(("memories", "list", "--user", "alice"), **env)
    assert "User keeps bees" in listed.stdout  # the same store from another directory
    assert f"store: {xdg / 'memstack'} (per-user default)" in listed.stderr
    assert not (first / ".memstack").exists() and not (second / ".memstack").exists()

    # A directory with its own .memstack (a store made there before) keeps using it, and the command says so.
    (second / ".memstack").mkdir()
    local = _run(("memories", "list", "--user", "alice"), **env)
    assert local.exit_code == 0 and "User keeps bees" not in local.stdout
    assert f"store: {second / '.memstack'} (./.memstack of this directory)" in local.stderr


def test_the_library_resolves_the_same_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTACK_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert Config.resolve().home == tmp_path / "xdg" / "memstack" == Config().home
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # not absolute: ignored, as the XDG specification says
    assert Config.resolve().home == Path.home() / ".local" / "share" / "memstack"
    (tmp_path / ".memstack").mkdir()
    assert Config.resolve().home == Path(".memstack")
    monkeypatch.setenv("MEMSTACK_HOME", str(tmp_path / "set"))
    assert Config.resolve().home == tmp_path / "set"


def test_json_output_of_a_store_command_is_still_one_line(tmp_path: Path) -> None:
    result = _run(("memories", "list", "--user", "ana", "--json"), MEMSTACK_HOME=str(tmp_path))
    assert result.exit_code == 0 and json.loads(result.output) == []
