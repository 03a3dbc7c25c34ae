"""``memstack serve`` as real processes for the tests: started on a free port, killed, restarted on the same data."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

CLI = [sys.executable, "-c", "from memstack.cli import main; main()"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One ``memstack serve`` on ``home`` (and ``database_url`` when given); ``start`` again after a kill."""

    def __init__(self, home: Path, database_url: str | None, *extra: str, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.extra = extra
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
        if database_url:
            self.env["MEMSTACK_DATABASE_URL"] = database_url
        self.env.update(env or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> Server:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        command = [*CLI, "serve", "--port", str(port), "--home", str(self.home), "--log-level", "warning", *self.extra]
        self.process = subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(self.process.stderr.read().decode() if self.process.stderr else "exited")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("memstack serve did not come up")

    def kill(self) -> None:
        """SIGKILL, at once (no graceful shutdown: a crash)."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)

    def wait(self) -> None:
        if self.process is not None:
            self.process.wait(60)
            if self.process.stderr is not None:
                self.process.stderr.close()

    def stop(self) -> None:
        """SIGTERM: a graceful shutdown (background work drained)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
        self.wait()
