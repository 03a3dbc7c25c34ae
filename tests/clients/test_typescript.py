"""The TypeScript client (``clients/typescript``) run by its own tests against a real ``memstack serve``.

pytest starts the server (a temporary home, an API key of tenant ``acme``, the hashing embedder and the offline
responder, tiers ``free`` 50 and ``tiny`` 2) and runs, in ``clients/typescript``: ``npm ci`` when ``node_modules``
is missing or was installed from another ``package-lock.json``, the type check of the client, its tests and
examples (``tsc --noEmit``), the build, and ``vitest run`` with the server's URL and key in the environment
(``MEMSTACK_TEST_URL``, ``MEMSTACK_TEST_KEY``). Any failing TypeScript test fails this one, with vitest's report.

The examples of ``docs/typescript.md`` are files of the package (``examples/``), run by those tests: the quickstart of
the package's README, a Vercel AI SDK route over ``/v1/chat/completions`` and an MCP TypeScript SDK client that
spawns ``memstack mcp`` (found on ``PATH`` beside this Python, acting on the server's home).

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
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstack.client import AsyncMemstackClient
from memstack.client._namespaces import RemoteAgents, RemoteContexts, RemoteSessions, RemoteUsers
from server.processes import CLI, Server  # tests/server/processes.py

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
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    home = tmp_path_factory.mktemp("typescript")
    env = {
        "MEMSTACK_EMBEDDER": "hash:64",
        "MEMSTACK_TIER_LIMITS": "free=50,tiny=2,premium=unlimited",
        "MEMSTACK_DEFAULT_TIER": "free",
    }
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    created = subprocess.run(
        [*CLI, "keys", "create", "--tenant", "acme", "--quiet", "--home", str(home)],
        env={**base, **env}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    match = KEY.search(created.stdout)
    assert match, created.stdout + created.stderr
    process = Server(home, None, "--auth", "keys", env=env).start()
    try:
        yield process, match.group(0)
    finally:
        process.stop()


def test_the_openapi_document_is_the_servers() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "openapi.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_typescript_client_passes_its_tests_against_a_real_server(npm: str, server: tuple[Server, str]) -> None:
    process, key = server
    env = {
        **process.env,
        "MEMSTACK_TEST_URL": process.url,
        "MEMSTACK_TEST_KEY": key,
        "MEMSTACK_TEST_PYTHON_METHODS": json.dumps(_python_methods()),
        # The MCP example spawns `memstack mcp` on the server's data: this Python's, on the server's home.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "MEMSTACK_HOME": str(process.home),
        "CI": "1",  # vitest: no watch mode, no interactive output
    }
    _run([npm, "run", "--silent", "check"], env)
    _run([npm, "run", "--silent", "build"], env)
    _run([npm, "exec", "--", "vitest", "run", "--reporter=dot"], env)
