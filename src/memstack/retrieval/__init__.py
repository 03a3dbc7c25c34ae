"""Pure ranking components: tokenizer, BM25, fusion, time expressions and the hybrid retriever.

Nothing here touches a database: stores hand passages (archived turns, memories) with their vectors to a
:class:`HybridRetriever` and get ranked hits back.
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
from memstack.retrieval.retriever import Hit, HybridRetriever, Passage, RetrievalSettings
from memstack.retrieval.timeexpr import TimeRange, find_time_range
from memstack.text import STOP_WORDS, query_terms, tokenize, words

__all__ = [
    "STOP_WORDS",
    "BM25Index",
    "Hit",
    "HybridRetriever",
    "Passage",
    "RetrievalSettings",
    "Retriever",
    "TimeRange",
    "find_time_range",
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
