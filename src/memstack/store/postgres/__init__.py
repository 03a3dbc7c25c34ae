"""The production store: PostgreSQL + pgvector (>= 0.8) through a psycopg 3 async pool.

Exact per-user search over a partial btree for ordinary users; a per-user HNSW index with iterative scans for very
large ones; full-text search over a generated ``tsvector``; ordered named migrations applied under an advisory
lock. ``MEMSTACK_DATABASE_URL=postgresql://…`` selects it (see :func:`memstack.store.open_store`).
"""

from __future__ import annotations

from memstack.store.postgres.store import PostgresStore
from memstack.store.vectors.hnsw import AnnSettings

__all__ = ["AnnSettings", "PostgresStore"]
