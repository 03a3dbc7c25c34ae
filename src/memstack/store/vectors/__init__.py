"""The vector-index role: nearest-neighbour search over each user's memories, behind one Protocol
(:class:`~memstack.store.vectors.base.VectorIndex`) that both stores call.

- :mod:`~memstack.store.vectors.base`: the Protocol and what a write tells it;
- :mod:`~memstack.store.vectors.exact`: the exact top-k both in-process scans share;
- :mod:`~memstack.store.vectors.cache`: SQLite's, an in-process LRU of per-user matrices scored exactly;
- :mod:`~memstack.store.vectors.pgvector`: PostgreSQL's, one statement per search, exact below a size and through
  the user's own HNSW index above (:mod:`~memstack.store.vectors.hnsw` builds and tracks those indexes);
- :mod:`~memstack.store.vectors.archive`: PostgreSQL's recall over the archive, the same exact-or-HNSW rule over
  every archived message, its candidates ranked by :func:`memstack.retrieval.archive.rank_candidates`.

Only the Protocol's names are exported here: importing the package loads neither numpy's cache nor psycopg.
"""

from memstack.store.vectors.base import IndexedRow, VectorIndex, VectorWrite

__all__ = ["IndexedRow", "VectorIndex", "VectorWrite"]
