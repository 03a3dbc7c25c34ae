"""The TypeScript client (``clients/typescript``) run by its own tests against a real ``memstack serve``.

pytest starts the servers on one temporary home (an API key of tenant ``acme``, the hashing embedder and the offline
responder, tiers ``free`` 50 and ``tiny`` 2): ``memstack serve --auth keys`` and ``memstack mcp --transport http``.
Then, in ``clients/typescript``: ``npm ci`` when ``node_modules`` is missing or was installed from another
``package-lock.json``, the type check of the client, its tests and examples (``tsc --noEmit``), the build, and
``vitest run`` with the servers' URLs and the key in the environment (``MEMSTACK_TEST_URL``, ``MEMSTACK_TEST_KEY``,
``MEMSTACK_TEST_MCP_URL``). Any failing TypeScript test fails this one, with vitest's report.

The examples of the package's README and of ``docs/typescript.md`` are files of the package (``examples/``), run by
those tests: the quickstart, a Vercel AI SDK route over ``/v1/chat/completions`` and an MCP TypeScript SDK client
session over streamable HTTP. The Python client's methods are handed to them too (``MEMSTACK_TEST_PYTHON_METHODS``),
and each must exist on the TypeScript client under its camelCase name.

Node 20 or later and npm are needed; where they are missing the tests fail saying how to install them (CI has them),
never skip. The OpenAPI document the types are generated from is checked here too: ``scripts/openapi.py --check``
fails when the server's document is not the committed ``clients/typescript/openapi.json`` (the TypeScript tests check
that ``src/schema.d.ts`` is generated from that file).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memstack.client import AsyncMemstackClient
from memstack.client._namespaces import RemoteAgents, RemoteContexts, RemoteSessions, RemoteUsers
from memstack.client._webhooks import RemoteWebhooks
from server.processes import CLI, Server, free_port  # tests/server/processes.py

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
STAMP = PACKAGE / "node_modules" / ".memstack-lock-sha256"
KEY = re.compile(r"msk_\S+")

#: Python client methods the TypeScript client has no use for, with the reason.
NOT_IN_TYPESCRIPT = {
    "aclose": "fetch holds no connection pool of the client's own: there is nothing to close",
}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` is not on PATH: the TypeScript client's tests need Node.js 20 or later and npm "
            "(Debian: sudo apt-get install -y nodejs npm; or `make node`)"
        )
    return path


def _run(command: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> None:
    done = subprocess.run(command, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` in clients/typescript failed:\n{done.stdout}\n{done.stderr}"[-20_000:])


@pytest.fixture(scope="module")
def npm() -> str:
    """npm, with the package's dependencies installed as its lock file says (``npm ci`` only when they are not)."""
    node, npm = _tool("node"), _tool("npm")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        pytest.fail(f"node {version} is too old for the TypeScript client: it needs Node.js 20 or later")
    lock = hashlib.sha256((PACKAGE / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text().strip() != lock:
        _run([npm, "ci", "--no-audit", "--no-fund"])
        STAMP.write_text(lock + "\n")
    return npm


def _python_methods() -> dict[str, list[str]]:
    """The Python client's public methods, by namespace, as the TypeScript client names them (camelCase)."""

    def names(cls: type) -> list[str]:
        found = [n for n, v in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")]
        found = [n for n in found if n not in NOT_IN_TYPESCRIPT]
        return sorted(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), n) for n in found)

    return {
        "client": names(AsyncMemstackClient),
        "sessions": names(RemoteSessions),
        "agents": names(RemoteAgents),
        "contexts": names(RemoteContexts),
        "users": names(RemoteUsers),
        "webhooks": names(RemoteWebhooks),
    }


@dataclass(frozen=True)
class Servers:
    http: Server  # memstack serve --auth keys
    mcp_url: str  # memstack mcp --transport http on the same home: its endpoint
    key: str  # an API key of tenant acme


def _wait_for_mcp(process: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + 90
    while True:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode() if process.stderr else "memstack mcp exited")
        try:
            httpx.post(url, timeout=1)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline, "memstack mcp --transport http did not come up"
            time.sleep(0.05)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    home = tmp_path_factory.mktemp("typescript")
    settings = {
        "MEMSTACK_EMBEDDER": "hash:64",
        "MEMSTACK_TIER_LIMITS": "free=50,tiny=2,premium=unlimited",
        "MEMSTACK_DEFAULT_TIER": "free",
    }
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}, **settings}
    created = subprocess.run(
        [*CLI, "keys", "create", "--tenant", "acme", "--quiet", "--home", str(home)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    match = KEY.search(created.stdout)
    assert match, created.stdout + created.stderr
    port = free_port()
    mcp = subprocess.Popen(
        [*CLI, "mcp", "--transport", "http", "--port", str(port), "--home", str(home)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    http = Server(home, None, "--auth", "keys", env=settings)
    try:
        http.start()  # while memstack mcp starts
        mcp_url = f"http://127.0.0.1:{port}/mcp"
        _wait_for_mcp(mcp, mcp_url)
        yield Servers(http, mcp_url, match.group(0))
    finally:
        mcp.terminate()
        mcp.wait(60)
        if mcp.stderr is not None:
            mcp.stderr.close()
        http.stop()


def test_the_openapi_document_is_the_servers() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "openapi.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_typescript_client_passes_its_tests_against_a_real_server(npm: str, servers: Servers) -> None:
    env = {
        **servers.http.env,
        "MEMSTACK_TEST_URL": servers.http.url,
        "MEMSTACK_TEST_KEY": servers.key,
        "MEMSTACK_TEST_MCP_URL": servers.mcp_url,
        "MEMSTACK_TEST_PYTHON_METHODS": json.dumps(_python_methods()),
        "CI": "1",  # vitest: no watch mode, no interactive output
        "NO_COLOR": "1",
    }
    _run([npm, "run", "--silent", "check"], env)
    _run([npm, "run", "--silent", "build"], env)
    _run([npm, "exec", "--", "vitest", "run"], env)
