"""Pure ranking components: BM25, fusion, the hybrid retriever and the archive ranking.

Nothing here touches a database: passages (archived messages, memories) come with their vectors and leave ranked,
either all of them (:class:`HybridRetriever`) or the part of an archive a database found with its indexes
(:func:`memstack.retrieval.archive.rank_candidates`), by the same formula. Words and stems come from
:mod:`memstack.text`, the tokenizer every full-text index uses too; a question's time range from
:mod:`memstack.dates` (re-exported here).
"""

from __future__ import annotations

from memstack.retrieval.base import Retriever
from memstack.retrieval.bm25 import BM25Index
from memstack.retrieval.fusion import (
    max_normalize,
    neighbour_smooth,
    recency,
    reciprocal_rank_fusion,
    time_boost,
    top_k,
)
from memstack.retrieval.retriever import Hit, HybridRetriever, Passage, Query, RetrievalSettings, fuse
from memstack.retrieval.time_range import TimeRange, find_time_range
from memstack.text import STOP_WORDS, query_terms, tokenize, words

__all__ = [
    "STOP_WORDS",
    "BM25Index",
    "Hit",
    "HybridRetriever",
    "Passage",
    "Query",
    "RetrievalSettings",
    "Retriever",
    "TimeRange",
    "find_time_range",
    "fuse",
    "max_normalize",
    "neighbour_smooth",
    "query_terms",
    "recency",
    "reciprocal_rank_fusion",
    "time_boost",
    "tokenize",
    "top_k",
    "words",
]
