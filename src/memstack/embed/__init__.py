"""Embedders: chosen by strings like ``local:minilm``, ``openai:text-embedding-3-small``; others by entry points.

A distribution adds an embedder under the ``memstack.embedders`` entry points: the name is the part before the
colon, the object a function of the part after it (and the options) returning an :class:`Embedder`. The test fakes
(``memstack-testing``) register ``hash:<dim>`` this way, so the runtime knows no test embedder by name: without
them installed, ``hash:64`` is :class:`~memstack.errors.MissingExtra` with the install command.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import entry_points

from memstack.embed.base import Embedder, normalize
from memstack.errors import ConfigError, MissingExtra

__all__ = ["Embedder", "get_embedder", "normalize"]

#: The entry-point group of embedders other distributions provide.
ENTRY_POINTS = "memstack.embedders"


def get_embedder(spec: str = "local:minilm", **options: object) -> Embedder:
    """Instantiate an embedder by name; implementations are imported lazily."""
    provider, _, model = spec.partition(":")
    if provider == "local" and model in ("minilm", "all-MiniLM-L6-v2", ""):
        from memstack.embed.local import MiniLMEmbedder

        return MiniLMEmbedder(**options)  # type: ignore[arg-type]
    from memstack.models.providers import PROVIDERS

    if provider in PROVIDERS and model:
        from memstack.embed.remote import OpenAIEmbedder

        return OpenAIEmbedder(model, provider=provider, **options)  # type: ignore[arg-type]
    plugin = _plugin(provider)
    if plugin is not None:
        return plugin(model, **options)
    if provider == "hash":
        raise MissingExtra("the hashing embedder (hash:<dim>, for tests)")
    raise ConfigError(f"unknown embedder {spec!r}; use local:minilm (offline default) or openai:<model>")


@functools.lru_cache(maxsize=16)
def _plugin(name: str) -> Callable[..., Embedder] | None:
    """The ``memstack.embedders`` entry point called ``name``, loaded (cached: the installed set does not change
    while a process runs, and reading it scans every installed distribution's metadata)."""
    for point in entry_points(group=ENTRY_POINTS, name=name):
        try:
            loaded: Callable[..., Embedder] = point.load()
        except ImportError as exc:
            owner = point.dist.name if point.dist is not None else "its distribution"
            raise ConfigError(f"the embedder {name!r} of {owner} does not import ({exc}): reinstall it") from exc
        return loaded
    return None
