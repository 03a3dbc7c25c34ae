"""Fixtures every test module can use.

``postgres_url``: a fresh, empty database on one embedded PostgreSQL 18 + pgvector server that is started once
per test session (``memstack.testing.postgres``) and stopped, with its files deleted, at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstack.testing.postgres import EmbeddedPostgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    with EmbeddedPostgres() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: EmbeddedPostgres) -> Iterator[str]:
    """The URL of a database created for this test and dropped after it."""
    name = postgres_server.new_database_name()
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)
