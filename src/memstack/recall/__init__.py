"""Recall over a user's long-term memories and archived conversations, and importing past conversations.

- :class:`Recaller` (``AsyncMemstack.recall``): memories and archived messages ranked together for a query;
- :class:`ArchiveIndex`: a user's archived messages ranked for a query, by the database (PostgreSQL) or from a
  bounded in-memory index kept current from the store (SQLite);
- :class:`TurnVectorizer`: archived exchanges embedded in batches after they are archived (never per query);
- :class:`Ingestor` (``AsyncMemstack.ingest``): a past conversation imported as archived turns, with memory capture
  and session memory as in a chat turn, without a chat model;
- :func:`layer_hits`: recalled items as the context's memory layer shows them.
"""

from __future__ import annotations

from memstack.recall.index import ArchiveIndex, UserArchive, message_text
from memstack.recall.ingest import IngestMessage, Ingestor, parse_messages
from memstack.recall.layers import layer_hits
from memstack.recall.service import RECALL_RETRIEVAL, Recaller, RecallSettings
from memstack.recall.vectors import ExchangeText, TurnVectorizer

__all__ = [
    "RECALL_RETRIEVAL",
    "ArchiveIndex",
    "ExchangeText",
    "IngestMessage",
    "Ingestor",
    "RecallSettings",
    "Recaller",
    "TurnVectorizer",
    "UserArchive",
    "layer_hits",
    "message_text",
    "parse_messages",
]
