"""``memstack serve`` as a separate process for the HTTP benchmarks: start it, wait for it, read its CPU and memory."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from memstack.errors import ConfigError

__all__ = ["cpu_s", "free_port", "rss_mb", "start_server", "stop_server", "wait_ready"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    home: Path, port: int, *, database_url: str | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``memstack serve --auth keys`` on ``home`` (and ``database_url`` when given), on 127.0.0.1:``port``.

    The caller's ``MEMSTACK_*`` variables are not passed on, so the server runs on the defaults plus ``env``."""
    command = [sys.executable, "-c", "from memstack.cli import main; main()", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--home", str(home), "--auth", "keys"]
    command += ["--log-level", "warning"]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    if database_url is not None:
        environ["MEMSTACK_DATABASE_URL"] = database_url
    environ.update(env or {})
    return subprocess.Popen(command, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop_server(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


async def wait_ready(port: int, server: subprocess.Popen[bytes], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            err = server.stderr.read().decode(errors="replace") if server.stderr else ""
            raise ConfigError(f"the server exited before it was ready (code {server.returncode}):\n{err[-2000:]}")
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n")
            head = await reader.readuntil(b"\r\n\r\n")
            writer.close()
            if head.startswith(b"HTTP/1.1 200"):
                return
        except OSError:
            pass
        await asyncio.sleep(0.2)
    raise ConfigError(f"the server did not answer /healthz on port {port} within {timeout_s:.0f} s")


def cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (Linux ``/proc``; ``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float | None:
    """Resident memory of a process in MB (``VmRSS`` from Linux ``/proc``; ``None`` elsewhere or once it exited)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None
