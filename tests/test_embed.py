import numpy as np
import pytest

from memstack.embed import get_embedder, normalize
from memstack.errors import ConfigError


async def test_minilm_ranks_paraphrase_above_unrelated() -> None:
    emb = get_embedder("local:minilm")
    v = await emb.embed(["I study biology", "I'm a biology major", "My quiz is next Thursday"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    sims = v @ v.T
    assert sims[0, 1] > 0.7 > sims[0, 2]


async def test_minilm_batches_match_single_calls() -> None:
    emb = get_embedder("local:minilm", batch_size=2)
    texts = ["alpha beta", "a much longer sentence about gardening in spring", "x", "coffee with oat milk"]
    batched = await emb.embed(texts)
    single = np.concatenate([await emb.embed([t]) for t in texts])
    assert np.allclose(batched, single, atol=1e-4)
    assert (await emb.embed([])).shape == (0, 384)


async def test_hashing_embedder_is_deterministic_and_word_based() -> None:
    emb = get_embedder("hash:64")
    a, b, c = await emb.embed(["red apple pie", "apple pie red", "quantum tunnelling"])
    assert emb.dim == 64 and np.allclose(a, b)
    assert float(a @ c) < 0.5


def test_unknown_embedder_says_what_to_use() -> None:
    with pytest.raises(ConfigError, match="local:minilm"):
        get_embedder("nope:thing")


def test_normalize_keeps_zero_rows() -> None:
    out = normalize(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])
