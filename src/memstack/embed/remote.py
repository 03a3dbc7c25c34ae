"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (``openai:text-embedding-3-small``, ``ollama:…``).

Texts are sent in batches of ``batch_size`` and the rows come back L2-normalised. The dimension is known in advance
for common models, given with ``dim=``, or learned from the first response. For models that can shorten their
vectors (``text-embedding-3-*``) ``dim=`` is sent as ``dimensions`` and becomes part of the name
(``openai:text-embedding-3-small@512``, which ``get_embedder`` accepts back), since vectors of different lengths
never mix in a store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np

from memstack.embed.base import Embedder, normalize
from memstack.errors import ConfigError, MalformedResponse
from memstack.models.providers import Provider, resolve_endpoint
from memstack.observe.accounting import record_model_call, role
from memstack.types import Vector

__all__ = ["KNOWN_DIMS", "OpenAIEmbedder"]

#: Native vector length of well-known embedding models.
KNOWN_DIMS: Mapping[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
}

_SHORTENABLE = ("text-embedding-3-",)


class OpenAIEmbedder:
    """``provider`` names a row of ``memstack.models.PROVIDERS``; ``base_url``/``api_key`` override it."""

    def __init__(
        self,
        model: str,
        *,
        provider: Provider | str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        dim: int | None = None,
        batch_size: int = 256,
        timeout: float = 60.0,
    ) -> None:
        base, at, size = model.rpartition("@")
        if at and size.isdigit() and dim is None:  # a name this class produced: "text-embedding-3-small@512"
            model, dim = base, int(size)
        if not model:
            raise ConfigError("an embedder needs a model name, e.g. openai:text-embedding-3-small")
        if batch_size < 1 or (dim is not None and dim < 1):
            raise ConfigError(f"batch_size and dim must be positive, got batch_size={batch_size}, dim={dim}")
        self.endpoint = resolve_endpoint(provider, base_url=base_url, api_key=api_key, headers=headers)
        self.model = model
        self._shorten = dim is not None and model.startswith(_SHORTENABLE) and dim != KNOWN_DIMS.get(model)
        self._dim = dim if dim is not None else KNOWN_DIMS.get(model)
        self._batch_size = batch_size
        self._timeout = timeout
        self._client: Any = None
        suffix = f"@{dim}" if self._shorten else ""
        self.name = f"{self.endpoint.provider.name}:{model}{suffix}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise ConfigError(
                f"the vector length of {self.name} is not known until the first embedding; "
                "pass dim=N or call `await embedder.embed([...])` once first"
            )
        return self._dim

    async def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [await self._batch(texts[i : i + self._batch_size]) for i in range(0, len(texts), self._batch_size)]
        return normalize(np.concatenate(parts))

    async def _batch(self, texts: Sequence[str]) -> Vector:
        from memstack.models.openai_compat import make_client, provider_errors

        if self._client is None:
            self._client = make_client(self.endpoint, self._timeout)
        params: dict[str, Any] = {
            "model": self.model,
            # Endpoints reject empty strings; a space embeds as "nothing" everywhere.
            "input": [text if text.strip() else " " for text in texts],
            "encoding_format": "float",
        }
        if self._shorten:
            params["dimensions"] = self._dim
        started = time.perf_counter()
        with role("embeddings"):
            try:
                with provider_errors(self.name, self.endpoint, self._timeout):
                    async with asyncio.timeout(self._timeout):
                        response = await self._client.embeddings.create(**params)
            except Exception:
                record_model_call(self.name, error=True, seconds=time.perf_counter() - started)
                raise
            used = getattr(getattr(response, "usage", None), "prompt_tokens", None)
            record_model_call(
                self.name, int(used or 0), reported=used is not None, seconds=time.perf_counter() - started
            )
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != len(texts):
            count = len(data) if isinstance(data, list) else "no"
            raise MalformedResponse(
                f"{self.name} returned {count} embeddings for {len(texts)} texts; check that the base URL is the API "
                "root (usually ending in /v1) and the endpoint's batch limit (lower batch_size)",
                body=str(response)[:2000],
            )
        vectors = [getattr(row, "embedding", None) for row in sorted(data, key=lambda row: getattr(row, "index", 0))]
        lengths = {len(v) if isinstance(v, list) else -1 for v in vectors}
        expected = self._dim if self._dim is not None else max(lengths)
        if lengths != {expected}:
            got = "/".join(str(n) if n >= 0 else "non-list" for n in sorted(lengths))
            raise MalformedResponse(
                f"{self.name} returned {got}-d vectors where {expected}-d were expected; pass the right dim= "
                "or check the model name",
                body=str(response)[:2000],
            )
        self._dim = expected
        matrix: Vector = np.asarray(vectors, dtype=np.float32)
        return matrix

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def __aenter__(self) -> OpenAIEmbedder:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


if TYPE_CHECKING:  # mypy proves the class satisfies the protocol
    _protocol_check: type[Embedder] = OpenAIEmbedder
