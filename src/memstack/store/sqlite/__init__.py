"""The embedded default store: stdlib ``sqlite3`` in WAL mode, one file, FTS5 text search, exact numpy vector search
over an LRU cache of each user's active vectors."""

from __future__ import annotations

from memstack.store.sqlite.store import SQLiteStore, StoreStats

__all__ = ["SQLiteStore", "StoreStats"]
