"""Fixtures every test module can use.

``postgres_url``: a fresh, empty database on one embedded PostgreSQL 18 + pgvector server that is started once
per test session (``memstack_testing.postgres``) and stopped, with its files deleted, at the end. ``pgbouncer``:
PgBouncer in transaction-pooling mode in front of that server (``bouncer.url(database)``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstack_testing.postgres import EmbeddedPostgres
from pooler import PgBouncer  # tests/pooler.py (this directory is on sys.path for its conftest)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    # pg_stat_statements lets a test see every statement the store sent (tests/store/test_shard_keys.py).
    with EmbeddedPostgres(settings={"shared_preload_libraries": "pg_stat_statements"}) as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: EmbeddedPostgres) -> Iterator[str]:
    """The URL of a database created for this test and dropped after it."""
    name = postgres_server.new_database_name()
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)


@pytest.fixture
def pgbouncer(postgres_server: EmbeddedPostgres) -> Iterator[PgBouncer]:
    """PgBouncer in transaction-pooling mode in front of ``postgres_server`` (``tests/pooler.py``); one per test,
    so no test inherits another's server connections (its database is dropped with them still open)."""
    with PgBouncer(postgres_server.url) as bouncer:
        yield bouncer
