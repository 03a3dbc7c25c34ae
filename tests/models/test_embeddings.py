"""The remote (OpenAI-compatible) embedder over real HTTP against the scripted server."""

import numpy as np
import pytest

from memstack.embed import Embedder, get_embedder
from memstack.embed.remote import OpenAIEmbedder
from memstack.errors import ConfigError, MalformedResponse, ProviderError, ProviderTimeout
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer


async def test_vectors_are_normalised_and_deterministic(server: ScriptedOpenAIServer) -> None:
    texts = ["I study biology", "biology I study", "my quiz is next Thursday"]
    async with server.embedder() as embedder:
        assert isinstance(embedder, Embedder)
        first = await embedder.embed(texts)
        again = await embedder.embed(texts[::-1])
    assert first.shape == (3, 64) and first.dtype == np.float32
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.allclose(again[::-1], first)
    sims = first @ first.T
    assert sims[0, 1] > 0.99 > sims[0, 2]  # the fake hashes words: same words, same vector
    request = server.embedding_requests[0]
    assert request.body["input"] == texts and request.body["encoding_format"] == "float"


async def test_large_inputs_are_sent_in_batches(server: ScriptedOpenAIServer) -> None:
    texts = [f"fact number {i}" for i in range(7)]
    async with server.embedder(batch_size=3) as embedder:
        batched = await embedder.embed(texts)
    async with server.embedder() as embedder:
        single = await embedder.embed(texts)
    assert [len(r.body["input"]) for r in server.embedding_requests] == [3, 3, 1, 7]
    assert np.allclose(batched, single)


async def test_shortened_models_send_dimensions_and_carry_them_in_the_name(server: ScriptedOpenAIServer) -> None:
    async with server.embedder("text-embedding-3-small", dim=32) as embedder:
        assert embedder.name == "openai:text-embedding-3-small@32" and embedder.dim == 32
        assert (await embedder.embed(["hello"])).shape == (1, 32)
    assert server.embedding_requests[0].body["dimensions"] == 32
    again = get_embedder(embedder.name, base_url=server.base_url, api_key="k")
    assert isinstance(again, OpenAIEmbedder) and again.name == embedder.name and again.dim == 32


async def test_unknown_models_learn_their_dimension_from_the_first_response() -> None:
    async with ScriptedOpenAIServer(embedding_dim=24) as server:
        embedder = get_embedder("ollama:my-embedder", base_url=server.base_url)
        with pytest.raises(ConfigError, match="pass dim=N"):
            _ = embedder.dim
        assert (await embedder.embed(["a b c"])).shape == (1, 24)
        assert embedder.dim == 24 and embedder.name == "ollama:my-embedder"
        assert "dimensions" not in server.embedding_requests[0].body
        await embedder.aclose()


async def test_known_models_have_their_dimension_before_any_call() -> None:
    assert OpenAIEmbedder("text-embedding-3-large", api_key="k").dim == 3072
    assert OpenAIEmbedder("nomic-embed-text", provider="ollama").dim == 768


async def test_a_response_of_the_wrong_length_is_malformed() -> None:
    async with ScriptedOpenAIServer(embedding_dim=16) as server:
        embedder = OpenAIEmbedder("nomic-embed-text", provider="ollama", base_url=server.base_url)  # expects 768
        with pytest.raises(MalformedResponse, match="16-d vectors where 768-d"):
            await embedder.embed(["hello"])
        await embedder.aclose()


async def test_empty_input_and_blank_texts(server: ScriptedOpenAIServer) -> None:
    async with server.embedder() as embedder:
        assert (await embedder.embed([])).shape == (0, 64)
        blank = await embedder.embed(["", "word"])
    assert server.embedding_requests[0].body["input"] == [" ", "word"]
    assert blank.shape == (2, 64) and np.allclose(blank[0], 0.0)


async def test_embedding_faults_map_to_typed_errors(server: ScriptedOpenAIServer) -> None:
    server.script_embeddings(Reply.error(429, "slow down"), Reply.dropped(), Reply(delay_s=5.0))
    async with server.embedder(timeout=1.0) as embedder:
        with pytest.raises(ProviderError, match="slow down") as info:
            await embedder.embed(["x"])
        assert info.value.status == 429
        with pytest.raises(ProviderError) as dropped:
            await embedder.embed(["x"])
        assert dropped.value.status is None
        with pytest.raises(ProviderTimeout):
            await embedder.embed(["x"])
        assert (await embedder.embed(["x"])).shape == (1, 64)  # faults used up: vectors again


def test_get_embedder_routes_provider_strings_to_the_remote_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_embedder("openai:text-embedding-3-small")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    embedder = get_embedder("openai:text-embedding-3-small")
    assert isinstance(embedder, OpenAIEmbedder) and embedder.dim == 1536
    with pytest.raises(ConfigError, match="unknown embedder"):
        get_embedder("openai:")
    with pytest.raises(ConfigError, match="positive"):
        OpenAIEmbedder("m", provider="ollama", batch_size=0)


@pytest.mark.parametrize(
    "body",
    [
        "<html>not an API</html>",
        '{"object": "list", "data": []}',
        '{"object": "list", "data": [{"index": 0, "embedding": "AAAA"}]}',
    ],
)
async def test_answers_that_are_not_embeddings_are_malformed(server: ScriptedOpenAIServer, body: str) -> None:
    server.script_embeddings(Reply.raw(body))
    async with server.embedder() as embedder:
        with pytest.raises(MalformedResponse):
            await embedder.embed(["hello"])
