"""``memstack mcp`` driven by the official MCP SDK's own client, over both transports, as real processes.

stdio: the client spawns ``memstack mcp`` (tenant from ``--tenant``). Streamable HTTP: ``memstack mcp --transport
http`` on a free port; every request carries a bearer key whose tenant scopes the tools. The data directory is
shared with this process (SQLite), which creates the keys and imports a past conversation for ``recall``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memstack.engine import AsyncMemstack
from memstack.types import UserRef

CLI = [sys.executable, "-c", "from memstack.cli import main; main()"]
EMBEDDER = "hash:384"
TOOLS = {"add_memory", "search_memories", "list_memories", "forget_memory", "restore_memory", "recall"}


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    return {**env, "MEMSTACK_HOME": str(home), "MEMSTACK_EMBEDDER": EMBEDDER, **extra}


def _engine(home: Path) -> AsyncMemstack:
    return AsyncMemstack(home=home, embedder=EMBEDDER, resume=False)


@asynccontextmanager
async def _stdio(home: Path, *args: str, **env: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", *args], env=_env(home, **env))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


@asynccontextmanager
async def _http(url: str, key: str) -> AsyncIterator[ClientSession]:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=300))
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _ok(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


async def _error(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert text.type == "text"
    return text.text


async def test_stdio_session_adds_searches_lists_forgets_restores_and_recalls(tmp_path: Path) -> None:
    async with _engine(tmp_path) as ms:  # a past conversation, for recall to find beside the memories
        await ms.ingest(
            "alice",
            "trip",
            [
                {"role": "user", "content": "We booked the cabin by the lake in Norway for July."},
                {"role": "assistant", "content": "Lovely, a lake cabin in July."},
            ],
            capture=False,
        )

    async with _stdio(tmp_path) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS

        tea = await _ok(session, "add_memory", content="Alice drinks green tea every morning", user_id="alice")
        await _ok(session, "add_memory", content="Alice is allergic to peanuts", category="fact", user_id="alice")
        await _ok(session, "add_memory", content="Bob drinks green tea too", user_id="bob")
        assert tea["content"] == "Alice drinks green tea every morning" and tea["category"] == "general"
        assert tea["action"] == "created"
        again = await _ok(session, "add_memory", content="alice drinks green tea every morning.", user_id="alice")
        assert again["action"] == "duplicate" and again["id"] == tea["id"]  # held already: not stored twice

        found = await _ok(session, "search_memories", query="green tea in the morning", limit=5, user_id="alice")
        assert found["results"][0]["memory"]["id"] == tea["id"]
        assert all(hit["memory"]["user_id"] == "alice" for hit in found["results"])
        assert isinstance(found["results"][0]["score"], float)
        best = found["results"][0]["score"]
        top = await _ok(session, "search_memories", query="green tea in the morning", min_score=best, user_id="alice")
        assert [hit["memory"]["id"] for hit in top["results"]] == [tea["id"]]
        labelled = await _ok(
            session, "add_memory", content="Alice leads the apollo launch", metadata={"project": "apollo"},
            user_id="alice",
        )  # fmt: skip
        assert labelled["metadata"] == {"project": "apollo"} and tea["metadata"] == {}
        in_apollo = await _ok(session, "list_memories", metadata={"project": "apollo"}, user_id="alice")
        assert [m["id"] for m in in_apollo["memories"]] == [labelled["id"]]
        searched = await _ok(session, "search_memories", query="launch", metadata={"project": "x"}, user_id="alice")
        assert searched["results"] == []
        await _ok(session, "forget_memory", memory_id=labelled["id"], user_id="alice")

        listed = await _ok(session, "list_memories", user_id="alice")
        assert [m["content"] for m in listed["memories"]] == [
            "Alice is allergic to peanuts",
            "Alice drinks green tea every morning",
        ]
        facts = await _ok(session, "list_memories", category="fact", user_id="alice")
        assert [m["category"] for m in facts["memories"]] == ["fact"]

        forgotten = await _ok(session, "forget_memory", memory_id=tea["id"], user_id="alice")
        assert forgotten["is_active"] is False and forgotten["deleted_by"] == "user"
        active = await _ok(session, "list_memories", user_id="alice")
        assert tea["id"] not in {m["id"] for m in active["memories"]}
        every = await _ok(session, "list_memories", include_forgotten=True, user_id="alice")
        assert tea["id"] in {m["id"] for m in every["memories"]}
        restored = await _ok(session, "restore_memory", memory_id=tea["id"], user_id="alice")
        assert restored["is_active"] is True

        recalled = await _ok(session, "recall", query="lake cabin in Norway", limit=5, user_id="alice")
        kinds = {item["kind"] for item in recalled["results"]}
        assert "turn" in kinds
        assert any("Norway" in item["text"] for item in recalled["results"])
        tea_recall = await _ok(session, "recall", query="green tea", limit=3, user_id="alice")
        assert tea_recall["results"][0]["kind"] == "memory" and tea_recall["results"][0]["id"] == tea["id"]
        assert json.loads(json.dumps(tea_recall)) == tea_recall  # JSON-able, dates as strings


async def test_forget_by_query_over_mcp_hides_it_from_recall_and_from_later_contexts(tmp_path: Path) -> None:
    """Issue 23 through MCP: the agent previews "forget everything about my cat", then forgets; recall (what an MCP
    client's model reads) no longer finds what the user said about the cat, nor does a chat turn's context on the
    same store (another process), until the memory is restored."""
    from memstack.turn.models import Models
    from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

    said = [
        {"role": "user", "content": "I just adopted a cat named Miso."},
        {"role": "assistant", "content": "Miso is a lovely name!"},
        {"role": "user", "content": "I am also learning Portuguese."},
        {"role": "assistant", "content": "Boa sorte!"},
    ]
    async with _engine(tmp_path) as ms:
        await ms.ingest("alice", "cat", said, capture=False)
        cat = await ms.add("alice", "User adopted a cat named Miso", category="fact")

    async with _stdio(tmp_path) as session:
        found = await _ok(session, "recall", query="Miso the cat", limit=10, user_id="alice")
        assert any("Miso" in item["text"] for item in found["results"] if item["kind"] == "turn")
        preview = await _ok(session, "forget_memory", query="everything about my cat", dry_run=True, user_id="alice")
        assert preview["dry_run"] and [m["id"] for m in preview["memories"]] == [cat.id]
        assert {(h["kind"], h["session_id"], h["turn"]) for h in preview["hidden"]} >= {("turn", "cat", 1)}
        done = await _ok(session, "forget_memory", query="everything about my cat", user_id="alice")
        assert [m["is_active"] for m in done["memories"]] == [False]
        recalled = await _ok(session, "recall", query="Miso the cat", limit=10, user_id="alice")
        assert not any("Miso" in item["text"] + item.get("context", "") for item in recalled["results"])
        assert (await _ok(session, "search_memories", query="cat", user_id="alice"))["results"] == []
        assert "not both or neither" in await _error(session, "forget_memory", user_id="alice")

    seen: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply.text("I do not know of any pets.")

    async with ScriptedOpenAIServer() as server:
        server.handle(answer, model="chat")
        chat = server.chat_model("chat")
        try:
            async with AsyncMemstack(home=tmp_path, embedder=EMBEDDER, models=Models(chat=chat)) as ms:
                await ms.chat("alice", "What pets do I have?")
                assert seen and "miso" not in json.dumps([r.body for r in seen]).lower()
                await ms.restore("alice", cat.id)
                await ms.chat("alice", "What pets do I have?")
                assert "miso" in json.dumps(seen[-1].body).lower()  # restored: it may reach the model again
        finally:
            await chat.aclose()


async def test_stdio_bad_arguments_are_tool_errors_and_the_session_goes_on(tmp_path: Path) -> None:
    async with _stdio(tmp_path) as session:
        assert "user_id" in await _error(session, "add_memory", content="no user named")
        assert "query" in await _error(session, "search_memories", user_id="alice")  # missing argument
        assert "limit" in await _error(session, "search_memories", query="tea", limit=0, user_id="alice")
        assert "empty" in await _error(session, "search_memories", query="   ", user_id="alice")
        assert "unknown category 'colour'" in await _error(
            session, "add_memory", content="likes red", category="colour", user_id="alice"
        )
        assert "no memory 'mem_nope'" in await _error(session, "forget_memory", memory_id="mem_nope", user_id="alice")
        added = await _ok(session, "add_memory", content="still serving after errors", user_id="alice")
        assert added["user_id"] == "alice"


async def test_stdio_a_full_tier_answers_with_the_upgrade_prompt(tmp_path: Path) -> None:
    """``add_memory`` is an explicit save (MCP captures nothing automatically): at the limit the tool error names
    the tier and its limit and carries the upgrade prompt for the assistant to pass on (issue 23)."""
    async with _stdio(tmp_path, MEMSTACK_TIER_LIMITS="free=1,pro=unlimited") as session:
        await _ok(session, "add_memory", content="Alice keeps bees", user_id="alice")
        refused = await _error(session, "add_memory", content="Alice sings in a choir", user_id="alice")
        assert "LimitReached: the free tier keeps at most 1 memories" in refused and "(tier free, limit 1)" in refused
        assert "You've reached the 1-memory limit of the free plan. Upgrade" in refused


async def test_stdio_fixed_user_and_tenant(tmp_path: Path) -> None:
    async with _stdio(tmp_path, "--tenant", "acme", MEMSTACK_MCP_USER="alice") as session:
        added = await _ok(session, "add_memory", content="Alice works at Acme")
        assert added["user_id"] == "alice"
        assert (await _ok(session, "search_memories", query="Acme", user_id="alice"))["results"]
        refused = await _error(session, "list_memories", user_id="bob")
        assert "acts for user 'alice' only" in refused

    async with _engine(tmp_path) as ms:  # stored for alice of tenant acme, not of tenant default
        assert [m.id for m in await ms.list(UserRef("alice", "acme"))] == [added["id"]]
        assert await ms.list(UserRef("alice", "default")) == []


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """``memstack mcp --transport http`` on a free port; yields the endpoint URL."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [*CLI, "mcp", "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(command, env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise AssertionError(process.stderr.read().decode() if process.stderr else "exited")
            try:
                httpx.post(url, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "memstack mcp --transport http did not come up"
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


async def _keys(home: Path, *tenants: str) -> list[str]:
    async with _engine(home) as ms:
        return [(await ms.store.keys.create(tenant))[1] for tenant in tenants]


async def test_http_sessions_are_scoped_by_key(tmp_path: Path, http_server: str) -> None:
    acme, globex = await _keys(tmp_path, "acme", "globex")

    async with _http(http_server, acme) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS
        secret = await _ok(session, "add_memory", content="Acme's launch code is tangerine", user_id="alice")
        hits = await _ok(session, "search_memories", query="launch code", user_id="alice")
        assert [hit["memory"]["id"] for hit in hits["results"]] == [secret["id"]]
        recalled = await _ok(session, "recall", query="launch code tangerine", user_id="alice")
        assert recalled["results"][0]["id"] == secret["id"]

    async with _http(http_server, globex) as session:  # the same user id under another tenant's key: another user
        await _ok(session, "add_memory", content="Globex likes blue whales", user_id="alice")
        hits = await _ok(session, "search_memories", query="launch code tangerine", user_id="alice")
        assert all("tangerine" not in hit["memory"]["content"] for hit in hits["results"])
        listed = await _ok(session, "list_memories", include_forgotten=True, user_id="alice")
        assert [m["content"] for m in listed["memories"]] == ["Globex likes blue whales"]
        recalled = await _ok(session, "recall", query="launch code tangerine", user_id="alice")
        assert all("tangerine" not in item["text"] for item in recalled["results"])
        assert "no memory" in await _error(session, "forget_memory", memory_id=secret["id"], user_id="alice")

    async with _engine(tmp_path) as ms:
        assert await ms.get(UserRef("alice", "acme"), secret["id"])  # untouched by globex's forget


def _rpc(url: str, key: str, method: str, session: str | None = None, **params: Any) -> httpx.Response:
    """One JSON-RPC request over streamable HTTP, as an MCP client sends it (a notification when it has no id)."""
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    if session is not None:
        headers |= {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not method.startswith("notifications/"):
        message["id"] = 1
    return httpx.post(url, json=message, headers=headers, timeout=30)


def _opened(url: str, key: str) -> str:
    """A session opened (initialize, then initialized) with ``key``; its id."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}
    opened = _rpc(url, key, "initialize", **hello)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    assert _rpc(url, key, "notifications/initialized", session).status_code == 202
    return session


async def test_http_a_session_answers_only_the_key_that_opened_it(tmp_path: Path, http_server: str) -> None:
    """Issue 24: a session id alone is no credential. Another tenant's key (or another key of the same tenant)
    naming the session gets the 404 of an unknown session, for a request or a DELETE, and the session goes on."""
    acme, globex, acme_too = await _keys(tmp_path, "acme", "globex", "acme")
    session = _opened(http_server, acme)
    headers = {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
    for stranger in (globex, acme_too):
        ended = httpx.delete(http_server, headers={**headers, "Authorization": f"Bearer {stranger}"}, timeout=30)
        assert ended.status_code == 404, ended.text
        assert _rpc(http_server, stranger, "tools/list", session).status_code == 404
    listed = _rpc(http_server, acme, "tools/list", session)  # the owner's session is untouched
    assert listed.status_code == 200 and "add_memory" in listed.text
    assert httpx.delete(http_server, headers={**headers, "Authorization": f"Bearer {acme}"}, timeout=30).is_success
    assert _rpc(http_server, acme, "tools/list", session).status_code == 404  # its owner may end it


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


async def test_http_refuses_a_missing_or_bad_key(tmp_path: Path, http_server: str) -> None:
    (acme,) = await _keys(tmp_path, "acme")
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx.post(http_server, json=hello, timeout=10).status_code == 401
    bad = httpx.post(http_server, json=hello, headers={"Authorization": "Bearer msk_wrong"}, timeout=10)
    assert bad.status_code == 401 and "unknown or revoked API key" in bad.json()["error"]

    with pytest.raises(BaseExceptionGroup) as refused:  # the SDK client fails the handshake
        async with _http(http_server, "msk_wrong"):
            pass
    assert any(isinstance(leaf, MCPError) for leaf in _leaves(refused.value))

    async with _http(http_server, acme) as session:  # a good key still works on the same server
        assert (await _ok(session, "add_memory", content="fine", user_id="alice"))["user_id"] == "alice"


def _readme_configs() -> list[dict[str, Any]]:
    page = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text(encoding="utf-8")
    return [json.loads(block)["mcpServers"]["memstack"] for block in re.findall(r"```json\n(.*?)```", page, re.S)]


async def test_the_readme_stdio_configuration_works(tmp_path: Path) -> None:
    stdio, http = _readme_configs()
    assert http["url"].endswith(":8701/mcp") and http["headers"]["Authorization"].startswith("Bearer ")
    assert Path(stdio["command"]).is_absolute() and stdio["args"][:3] == ["-m", "memstack", "mcp"]
    command = sys.executable  # the page's is an example of the path `memstack mcp --print-config` prints
    env = _env(tmp_path, **{**stdio["env"], "MEMSTACK_HOME": str(tmp_path)})
    params = StdioServerParameters(command=command, args=stdio["args"], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            added = await _ok(session, "add_memory", content="configured as docs/mcp.md says")
    assert added["user_id"] == stdio["env"]["MEMSTACK_MCP_USER"]


def test_http_takes_no_tenant_option(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memstack.cli import main

    done = CliRunner().invoke(main, ["mcp", "--transport", "http", "--tenant", "acme"], env=_env(tmp_path))
    assert done.exit_code == 1 and "API key names the tenant" in done.output


async def test_the_printed_configuration_starts_without_memstack_on_the_path(tmp_path: Path) -> None:
    """``memstack mcp --print-config``: an absolute command (this Python, ``-m memstack``) that a client without the
    virtual environment on its PATH can start; the server reports memstack's version."""
    from memstack import __version__

    printed = subprocess.run(
        [*CLI, "mcp", "--print-config", "--user", "alice", "--home", str(tmp_path)],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    entry = json.loads(printed.stdout)["mcpServers"]["memstack"]
    assert entry["command"] == sys.executable and entry["args"] == ["-m", "memstack", "mcp"]
    assert entry["env"] == {"MEMSTACK_HOME": str(tmp_path), "MEMSTACK_MCP_USER": "alice"}
    env = {**entry["env"], "PATH": "/nonexistent", "MEMSTACK_EMBEDDER": EMBEDDER}  # nothing found through PATH
    env.update({k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "HOME")})  # as this test runs
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            hello = await session.initialize()
            added = await _ok(session, "add_memory", content="started by absolute path")
    assert hello.server_info.name == "memstack" and hello.server_info.version == __version__
    assert added["user_id"] == "alice"


async def test_tool_answers_are_one_short_line_per_memory_for_the_model(tmp_path: Path) -> None:
    """The text a client puts in the model's context was each memory as ~17 lines of indented JSON; now it is one
    line per memory, and the structured content still carries every field."""
    async with _stdio(tmp_path, "--user", "alice") as session:
        for content in ("Alice drinks green tea", "Alice keeps bees", "Alice runs on Sundays"):
            await _ok(session, "add_memory", content=content, category="preference")
        listed = await session.call_tool("list_memories", {})
        searched = await session.call_tool("search_memories", {"query": "green tea", "limit": 2})
        recalled = await session.call_tool("recall", {"query": "bees", "limit": 2})
        forgot = await session.call_tool("forget_memory", {"query": "bees", "dry_run": True})
    text = listed.content[0].text  # type: ignore[union-attr]
    lines = text.splitlines()
    assert len(lines) == 3 and all(re.fullmatch(r"mem_\w+ \[preference\] Alice .+", line) for line in lines), text
    assert listed.structured_content is not None
    assert set(listed.structured_content["memories"][0]) >= {"id", "user_id", "created_at", "is_active"}
    found = searched.content[0].text.splitlines()  # type: ignore[union-attr]
    assert len(found) == 2 and re.fullmatch(r"-?\d\.\d\d mem_\w+ \[preference\] Alice drinks green tea", found[0])
    assert re.fullmatch(r"\d\.\d\d memory mem_\w+ \[preference\] \d{4}-\d\d-\d\d: Alice keeps bees",
                        recalled.content[0].text.splitlines()[0])  # type: ignore[union-attr]  # fmt: skip
    assert re.match(r"Would forget \d+ memor(y|ies) about 'bees':\nmem_", forgot.content[0].text)  # type: ignore[union-attr]
    assert "{" not in text + forgot.content[0].text  # type: ignore[union-attr]


def _first_lines(process: subprocess.Popen[bytes], count: int, *, within_s: float) -> list[str]:
    """The first ``count`` lines the process writes to stderr, or what it wrote by the deadline (never blocks)."""
    import select

    assert process.stderr is not None
    fd, data = process.stderr.fileno(), b""
    deadline = time.monotonic() + within_s
    while data.count(b"\n") < count and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    lines = data.decode().splitlines()[:count]
    return lines + [""] * (count - len(lines))


def test_the_http_server_says_where_it_serves_before_serving(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [*CLI, "mcp", "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(command, env=_env(tmp_path), stderr=subprocess.PIPE)
    try:
        said = _first_lines(process, 2, within_s=60)
    finally:
        process.terminate()
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()
    assert said[0].strip() == f"store: {tmp_path} ($MEMSTACK_HOME)"
    assert said[1].startswith(f"memstack mcp: serving http://127.0.0.1:{port}/mcp; every request needs an API key")

    with socket.socket() as holder:  # a port in use: one line, before anything says it serves
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        busy = holder.getsockname()[1]
        done = subprocess.run(
            [*CLI, "mcp", "--transport", "http", "--port", str(busy)],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1 and f"port {busy} on 127.0.0.1 is already in use" in done.stderr
    assert "serving" not in done.stderr


async def test_search_list_and_recall_take_as_of_and_say_when_a_memory_held(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    async with _engine(tmp_path) as ms:
        moved = datetime(2022, 3, 1, tzinfo=UTC)
        await ms.add("alice", "Alice lives in Paris", category="fact", valid_to=moved)
        await ms.add("alice", "Alice lives in Berlin", category="fact", valid_from=moved)
    async with _stdio(tmp_path, "--user", "alice") as session:
        now = await _ok(session, "list_memories")
        then = await _ok(session, "list_memories", as_of="2020-01-01")
        searched = await session.call_tool("search_memories", {"query": "where does Alice live", "as_of": "2020-01-01"})
        recalled = await _ok(session, "recall", query="where does Alice live", as_of="2020-01-01T00:00:00Z")
        far = await _error(session, "search_memories", query="home", as_of="9999-01-01")
    assert [m["content"] for m in now["memories"]] == ["Alice lives in Berlin"]
    assert [m["content"] for m in then["memories"]] == ["Alice lives in Paris"]
    assert searched.content[0].text.endswith("Alice lives in Paris (until March 2022)")  # type: ignore[union-attr]
    assert [i["text"] for i in recalled["results"] if i["kind"] == "memory"] == ["Alice lives in Paris"]
    assert "as_of must be a time between" in far
