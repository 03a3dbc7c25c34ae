"""``open`` loads what a turn would load on first use, so the engine's first turn reads no model file (issue: the
first turn of a process took 1.4 s against tens of milliseconds warm)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memstack import tokens
from memstack.capture.judge.cross import shared_cross_encoder
from memstack.config import Config
from memstack.embed import local
from memstack.embed.local import MiniLMEmbedder
from memstack.engine import AsyncMemstack
from memstack.types import UserRef


async def test_the_first_turn_after_open_loads_no_model(tmp_path: Path) -> None:
    tokens._encoding.cache_clear()  # as in a new process
    local._loaded.cache_clear()
    config = Config(home=tmp_path, embedder="local:minilm", database_url=f"sqlite:///{tmp_path / 'memstack.db'}")
    async with AsyncMemstack(config) as ms:
        counted, embedded = tokens._encoding.cache_info().misses, local._loaded.cache_info().misses
        assert counted >= 1 and embedded == 1  # read at open
        assert shared_cross_encoder()._session is not None  # the offline update judge's model too
        await ms.chat(UserRef("ana"), "I moved to Lisbon last month. What should I eat first?")
        assert tokens._encoding.cache_info().misses == counted
        assert local._loaded.cache_info().misses == embedded


async def test_embedders_of_a_process_share_one_model() -> None:
    one, two = MiniLMEmbedder(), MiniLMEmbedder()
    first, second = await one.embed(["a shared session"]), await two.embed(["a shared session"])
    assert one._session is two._session
    assert np.array_equal(first, second)
    await one.aclose()  # closing one embedder leaves the other working
    assert (await two.embed(["still here"])).shape == (1, 384)


async def test_an_engine_that_only_manages_data_loads_no_chat_model_at_open(tmp_path: Path) -> None:
    """``warm=False`` (the CLI's data commands): a one-shot command would pay ~2 s of loading and use none of it."""
    tokens._encoding.cache_clear()
    local._loaded.cache_clear()
    config = Config(home=tmp_path, embedder="local:minilm", database_url=f"sqlite:///{tmp_path / 'memstack.db'}")
    async with AsyncMemstack(config, resume=False, warm=False):
        assert tokens._encoding.cache_info().misses == 0
        assert local._loaded.cache_info().misses == 0
