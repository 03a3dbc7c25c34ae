"""``memstack serve`` as a user runs it: a real process, local mode on a fresh home, keys mode once a key exists."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from memstack.cli.serve import choose_auth

CLI = [sys.executable, "-c", "from memstack.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}


def _wait(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("memstack serve did not come up")


def _serve(home: Path, port: int, *extra: str) -> subprocess.Popen[str]:
    command = [*CLI, "serve", "--port", str(port), "--home", str(home), "--log-level", "warning", *extra]
    return subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_serve_on_a_fresh_home_runs_in_local_mode_then_requires_keys(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server = _serve(tmp_path, port)
    try:
        _wait(url, server)
        added = httpx.post(f"{url}/v1/users/alice/memories", json={"content": "User sings in a choir"})
        assert added.status_code == 201
        assert httpx.get(f"{url}/docs").status_code == 200
        assert "/v1/users/{user_id}/memories" in httpx.get(f"{url}/openapi.json").json()["paths"]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "LOCAL MODE" in err
    assert f"memstack: store {tmp_path} (--home), serving {url}" in err  # which store, as an absolute path

    made = subprocess.run(
        [*CLI, "keys", "create", "--tenant", "default", "--json", "--home", str(tmp_path)],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    key = json.loads(made.stdout)["secret"]
    server = _serve(tmp_path, port)
    try:
        _wait(url, server)
        assert httpx.get(f"{url}/v1/users/alice/memories").status_code == 401
        keyed = httpx.get(f"{url}/v1/users/alice/memories", headers={"Authorization": f"Bearer {key}"})
        assert [m["content"] for m in keyed.json()["memories"]] == ["User sings in a choir"]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "LOCAL MODE" not in err


def test_a_busy_port_is_an_error_before_serving_is_announced(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run(
            [*CLI, "serve", "--port", str(port), "--home", str(tmp_path)],
            env=_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr and "--port" in done.stderr
    assert "serving" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "memstack.db").exists()  # refused before anything was opened


def test_serve_refuses_local_mode_off_loopback(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "serve", "--host", "0.0.0.0", "--home", str(tmp_path)],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "refusing to serve without API keys" in done.stderr


def test_choose_auth() -> None:
    assert choose_auth("auto", "127.0.0.1", 0) == "local"
    assert choose_auth("auto", "::1", 0) == "local"
    assert choose_auth("auto", "localhost", 2) == "keys"
    assert choose_auth("auto", "0.0.0.0", 1) == "keys"
    assert choose_auth("keys", "127.0.0.1", 0) == "keys"
