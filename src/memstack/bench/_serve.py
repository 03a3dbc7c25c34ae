"""``memstack serve`` as a separate process for the HTTP benchmarks: the database it serves, start it, wait for it,
read its CPU and memory (the supervisor and its workers together)."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from memstack.bench._fakes import need_fakes
from memstack.errors import ConfigError

__all__ = [
    "Backend",
    "ClosedLoop",
    "cpu_s",
    "database",
    "free_port",
    "rss_mb",
    "start_server",
    "stop_server",
    "wait_ready",
]

Backend = Literal["sqlite", "postgres"]


@contextmanager
def database(backend: Backend, log: Callable[[str], None]) -> Iterator[str | None]:
    """``None`` for SQLite; for PostgreSQL the URL of a fresh database on an embedded server, stopped afterwards."""
    if backend == "sqlite":
        yield None
        return
    if backend != "postgres":
        raise ConfigError(f"unknown backend {backend!r}; use sqlite or postgres")
    need_fakes()
    from memstack_testing.postgres import EmbeddedPostgres

    log("starting an embedded PostgreSQL server")
    with EmbeddedPostgres() as pg:
        yield pg.create_database()


class ClosedLoop:
    """Closed-loop clients of a server on 127.0.0.1 (each sends a request, reads the whole answer, sends the next):
    a subclass writes :meth:`client`; latencies of good answers and the count of the others are kept while
    ``record`` is set."""

    def __init__(self, port: int, secret: str) -> None:
        self._port = port
        self._auth = f"Authorization: Bearer {secret}\r\n".encode()
        self.latencies: list[float] = []
        self.errors = 0
        self.record = False

    def count(self, ok: bool, started: float) -> None:
        """One answer, good or not, to a request sent at ``started`` (``time.perf_counter``)."""
        if self.record:
            if ok:
                self.latencies.append(time.perf_counter() - started)
            else:
                self.errors += 1

    async def client(self, stop_at: float) -> None:
        raise NotImplementedError

    async def run(self, clients: int, seconds: float) -> float:
        """``clients`` clients for ``seconds``; the seconds it took."""
        stop_at = time.perf_counter() + seconds
        started = time.perf_counter()
        await asyncio.gather(*(self.client(stop_at) for _ in range(clients)))
        return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    home: Path,
    port: int,
    *,
    database_url: str | None = None,
    env: dict[str, str] | None = None,
    workers: int = 1,
) -> subprocess.Popen[bytes]:
    """``memstack serve --auth keys --workers N`` on ``home`` (and ``database_url`` when given), on
    127.0.0.1:``port``.

    The caller's ``MEMSTACK_*`` variables are not passed on, so the server runs on the defaults plus ``env``."""
    command = [sys.executable, "-c", "from memstack.cli import main; main()", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--home", str(home), "--auth", "keys"]
    command += ["--log-level", "warning", "--workers", str(workers)]
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


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (the state is ``[0]``, the parent ``[1]``)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _tree(pid: int) -> list[int]:
    """``pid`` and every process below it (a supervisor's workers), read from Linux ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        found.append(current := todo.pop())
        todo.extend(children.get(current, ()))
    return found


def cpu_s(pid: int) -> float | None:
    """User + system CPU seconds so far of a process and the processes below it (Linux ``/proc``; ``None``
    elsewhere). A worker that exits between two readings takes its seconds with it."""
    if _stat(pid) is None:
        return None
    ticks = sum(int(f[11]) + int(f[12]) for p in _tree(pid) if (f := _stat(p)) is not None)
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float | None:
    """Resident memory in MB of a process and the processes below it (``VmRSS`` from Linux ``/proc``; ``None``
    elsewhere or once it exited)."""
    if _stat(pid) is None:
        return None
    total = 0
    for member in _tree(pid):
        try:
            lines = Path(f"/proc/{member}/status").read_text().splitlines()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in lines if line.startswith("VmRSS:")), 0)
    return total / 1024
