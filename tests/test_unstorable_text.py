"""The Python API and the CLI refuse text no store can keep (NUL, a lone surrogate) with ``InputError`` before any
work starts, identically on SQLite and PostgreSQL, and what is stored stays as it was."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstack import AsyncMemstack
from memstack.cli import main
from memstack.errors import InputError
from memstack.types import UserRef, check_data, check_id, check_text
from memstack_testing.postgres import EmbeddedPostgres

BAD = ["a\x00b", "a\ud800b", "\udfff"]
Call = Callable[[], Awaitable[Any]]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
    name = server.new_database_name()
    yield server.create_database(name)
    server.drop_database(name)


def test_the_check_names_the_field_and_the_character() -> None:
    assert check_text("plain text, emoji 🐝, tab\t", "x") == "plain text, emoji 🐝, tab\t"
    with pytest.raises(InputError, match=r"the message contains a NUL character .* at position 1"):
        check_text("a\x00b", "the message")
    with pytest.raises(InputError, match=r"metadata\.where contains a lone surrogate \(U\+D800\) at position 2"):
        check_data({"where": ["ok", "Li\ud800"]}, "metadata")
    with pytest.raises(InputError, match="a key of metadata contains a NUL"):
        check_data({"k\x00": 1}, "metadata")
    with pytest.raises(InputError, match="memory id contains a NUL"):
        check_id("m\x00", "memory id")
    with pytest.raises(InputError, match="user_id contains a lone surrogate"):
        UserRef("\udfff")
    # how Python hands over a byte that is not UTF-8 (command-line arguments, stdin, file names)
    undecoded = b"caf\xe9".decode("utf-8", "surrogateescape")
    with pytest.raises(InputError, match=r"the message is not UTF-8 text: byte 0xe9 at position 3 did not decode"):
        check_text(undecoded, "the message")
    with pytest.raises(InputError, match=r"the message is bytes; pass text \(str\): decode it first"):
        check_text(b"caf\xc3\xa9", "the message")  # type: ignore[arg-type]


def _calls(ms: AsyncMemstack, bad: str, memory_id: str, session_id: str) -> list[tuple[str, Call]]:
    ana = UserRef("ana")
    task = {"instructions": "Sum it up", "payload": {"text": bad}}
    imported = [{"role": "user", "content": bad, "at": "2026-01-01T10:00:00"}]
    return [
        ("chat message", lambda: ms.chat("ana", f"I like {bad} tea")),
        ("chat metadata", lambda: ms.chat("ana", "hello", metadata={"location": bad})),
        ("chat metadata key", lambda: ms.chat("ana", "hello", metadata={bad: "x"})),
        ("chat session", lambda: ms.chat("ana", "hello", session_id=bad)),
        ("delegated task", lambda: ms.delegate("default", None, task, user_id="ana")),
        ("add", lambda: ms.add("ana", f"User {bad} bees")),
        ("add agent id", lambda: ms.add("ana", "User hums", agent_id=bad)),
        ("edit", lambda: ms.edit("ana", memory_id, content=f"User {bad} wasps")),
        ("get", lambda: ms.get("ana", bad)),
        ("forget", lambda: ms.forget("ana", bad)),
        ("restore", lambda: ms.restore("ana", bad)),
        ("delete", lambda: ms.delete("ana", bad)),
        ("history", lambda: ms.history("ana", bad)),
        ("list text", lambda: ms.list("ana", text=bad)),
        ("search", lambda: ms.search("ana", f"bees {bad}")),
        ("recall", lambda: ms.recall("ana", f"bees {bad}")),
        ("user id", lambda: ms.list(bad)),
        ("ingest", lambda: ms.ingest("ana", "ses_import", imported)),
        ("end session", lambda: ms.end_session("ana", bad)),
        ("key tenant", lambda: ms.store.keys.create(bad)),
        ("key name", lambda: ms.store.keys.create("acme", name=bad)),
        ("key revoke", lambda: ms.store.keys.revoke(bad)),
        ("agent put", lambda: ms.store.agents.put("acme", "keeper", {"core": f"You help {bad}."})),
        ("agent name", lambda: ms.store.agents.get("acme", bad)),
        ("agent delete", lambda: ms.store.agents.delete("acme", bad)),
        ("context", lambda: ms.store.contexts.get("default", bad)),
        ("session id", lambda: ms.store.sessions.open(ana, session_id + bad, create=False)),
    ]


@pytest.mark.parametrize("bad", BAD, ids=["nul", "high-surrogate", "low-surrogate"])
def test_the_python_api_refuses_unstorable_text(tmp_path: Path, database_url: str | None, bad: str) -> None:
    async def run() -> None:
        async with AsyncMemstack(home=tmp_path, database_url=database_url, embedder="hash:64") as ms:
            kept = await ms.add("ana", "User keeps bees")
            first = await ms.chat("ana", "I keep bees in my garden.")
            await ms.store.agents.put("acme", "keeper", {"core": "You help beekeepers."})
            await ms.wait_idle()
            before = await _snapshot(ms, first.session_id)
            wrong = []
            for label, call in _calls(ms, bad, kept.id, first.session_id):
                try:
                    await call()
                except InputError as exc:
                    if "NUL" not in str(exc) and "surrogate" not in str(exc) and "printable" not in str(exc):
                        wrong.append(f"{label}: {exc}")
                else:
                    wrong.append(f"{label}: accepted")
            assert not wrong, "\n".join(wrong)
            await ms.wait_idle()
            assert await _snapshot(ms, first.session_id) == before

    asyncio.run(run())


async def _snapshot(ms: AsyncMemstack, session_id: str) -> tuple[Any, ...]:
    memories = await ms.list("ana", include_deleted=True)
    state = await ms.store.sessions.open(UserRef("ana"), session_id, create=False)
    agent = await ms.store.agents.get("acme", "keeper")
    return (
        [(m.id, m.content, m.is_active) for m in memories],
        (state.turn_count, [t.user_summary for t in state.turn_log], [m.content for m in state.raw_window]),
        agent.definition,
    )


def test_the_python_api_refuses_bytes(tmp_path: Path) -> None:
    async def run() -> None:
        async with AsyncMemstack(home=tmp_path, embedder="hash:64") as ms:
            text: Any = b"User keeps bees"
            for label, call in (
                ("add", lambda: ms.add("ana", text)),
                ("search", lambda: ms.search("ana", text)),
                ("recall", lambda: ms.recall("ana", text)),
                ("chat", lambda: ms.chat("ana", text)),
            ):
                with pytest.raises(InputError, match="is bytes; pass text"):
                    await call()
                assert await ms.list("ana") == [], label

    asyncio.run(run())


def test_the_installed_command_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """Real argv and stdin bytes (Latin-1 "café"), through the installed ``memstack`` command: a clear error, no
    traceback, nothing stored."""
    memstack = Path(sys.executable).with_name("memstack")
    env = {**os.environ, "MEMSTACK_HOME": str(tmp_path), "MEMSTACK_EMBEDDER": "hash:64", "LC_ALL": "C.UTF-8"}
    for args, stdin in (
        ([b"memories", b"add", b"--user", b"ana", b"User drinks caf\xe9"], b""),
        ([b"memories", b"search", b"--user", b"ana", b"caf\xe9"], b""),
        ([b"chat", b"--user", b"ana"], b"I like caf\xe9\n"),
    ):
        done = subprocess.run([bytes(memstack), *args], input=stdin, capture_output=True, env=env, timeout=120)
        output = (done.stdout + done.stderr).decode("utf-8", "replace")
        assert "not UTF-8 text: byte 0xe9" in output and "Traceback" not in output, (args, output)
        assert args[0] == b"chat" or done.returncode != 0, (args, output)
    listed = subprocess.run([memstack, "memories", "list", "--user", "ana", "--json"], capture_output=True, env=env)
    assert listed.returncode == 0 and json.loads(listed.stdout.decode().splitlines()[-1]) == []


def test_the_cli_refuses_unstorable_text(tmp_path: Path) -> None:
    env = {"MEMSTACK_HOME": str(tmp_path), "MEMSTACK_EMBEDDER": "hash:64", "COLUMNS": "200"}
    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        result = runner.invoke(main, list(args), env=env, catch_exceptions=False)
        return result.exit_code, result.output

    assert run("memories", "add", "--user", "ana", "User keeps bees")[0] == 0
    for args in (
        ("memories", "add", "--user", "ana", "User \x00 bees"),
        ("memories", "search", "--user", "ana", "bees \x00"),
        ("memories", "list", "--user", "a\x00"),
        ("keys", "create", "--tenant", "ac\x00me"),
    ):
        code, output = run(*args)
        assert code != 0 and "NUL" in output and "Traceback" not in output, (args, output)
    code, output = run("memories", "list", "--user", "ana", "--json")
    assert code == 0 and '"User keeps bees"' in output and output.count('"id"') == 1
