"""Fixtures shared by the capture tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memstack.capture.offline import OfflineClassifier
from memstack.embed import Embedder, get_embedder


@pytest.fixture(scope="module")
async def minilm() -> AsyncIterator[Embedder]:
    """The local MiniLM embedder, loaded once per test module."""
    embedder = get_embedder("local:minilm")
    await embedder.embed(["warm up"])
    yield embedder
    await embedder.aclose()


@pytest.fixture(scope="module")
async def classifier(minilm: Embedder) -> AsyncIterator[OfflineClassifier]:
    """The offline classifier over the module's MiniLM embedder."""
    clf = OfflineClassifier(minilm)
    yield clf
    await clf.aclose()
