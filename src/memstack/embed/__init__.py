"""Embedders: chosen by strings like ``local:minilm``, ``openai:text-embedding-3-small``, ``hash:64``."""

from __future__ import annotations

from memstack.embed.base import Embedder, normalize
from memstack.errors import ConfigError

__all__ = ["Embedder", "get_embedder", "normalize"]


def get_embedder(spec: str = "local:minilm", **options: object) -> Embedder:
    """Instantiate an embedder by name; implementations are imported lazily."""
    provider, _, model = spec.partition(":")
    if provider == "local" and model in ("minilm", "all-MiniLM-L6-v2", ""):
        from memstack.embed.local import MiniLMEmbedder

        return MiniLMEmbedder(**options)  # type: ignore[arg-type]
    if provider == "hash":
        from memstack.embed.hashing import HashingEmbedder

        if not (model or "64").isdigit() or int(model or 64) < 1:
            raise ConfigError(f"embedder {spec!r}: hash:<dim> needs a whole number of dimensions, e.g. hash:64")
        return HashingEmbedder(int(model or 64))
    from memstack.models.providers import PROVIDERS

    if provider in PROVIDERS and model:
        from memstack.embed.remote import OpenAIEmbedder

        return OpenAIEmbedder(model, provider=provider, **options)  # type: ignore[arg-type]
    raise ConfigError(
        f"unknown embedder {spec!r}; use local:minilm (offline default), openai:<model> or hash:<dim> (tests only)"
    )
