"""Endpoints as rows of data: where an OpenAI-compatible API lives and how to authenticate to it.

A model string ``provider:model`` (``openai:gpt-4o-mini``, ``ollama:llama3.2``, ``ollama:qwen2.5:7b``) names a row
of ``PROVIDERS`` and the model the endpoint serves. Settings resolve per call, never at import time:

- base URL: the ``base_url`` argument, else ``$MEMSTACK_<PROVIDER>_BASE_URL``, else the row's default;
- API key: the ``api_key`` argument, else the row's environment variable (``$OPENAI_API_KEY``, ``$GROQ_API_KEY``…);
  a provider that requires a key and has none raises ``ConfigError`` naming the variable to set.

Any other OpenAI-compatible server is ``custom:<model>`` with ``base_url=`` (or ``$MEMSTACK_CUSTOM_BASE_URL``), or a
new row added with ``register_provider``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memstack.errors import ConfigError

__all__ = [
    "PROVIDERS",
    "Endpoint",
    "ModelSpec",
    "Provider",
    "get_provider",
    "parse_model_spec",
    "register_provider",
    "resolve_endpoint",
]

#: Sent as the key to servers that need none (the SDK refuses an empty key).
NO_KEY = "not-needed"


@dataclass(frozen=True, slots=True)
class Provider:
    """One OpenAI-compatible endpoint family.

    ``json_mode``: accepts ``response_format={"type": "json_object"}``. ``stream_usage``: accepts
    ``stream_options={"include_usage": true}``. ``max_tokens_param``: the request field that caps the reply.
    """

    name: str
    base_url: str | None
    api_key_env: str | None
    key_required: bool
    default_headers: Mapping[str, str] = field(default_factory=dict)
    json_mode: bool = True
    stream_usage: bool = True
    max_tokens_param: str = "max_tokens"

    @property
    def base_url_env(self) -> str:
        return f"MEMSTACK_{self.name.upper().replace('-', '_')}_BASE_URL"


_ROWS = (
    Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", True, max_tokens_param="max_completion_tokens"),
    Provider(
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai/",
        "GEMINI_API_KEY",
        True,
        stream_usage=False,
    ),
    Provider("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY", True),
    Provider("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True, {"X-Title": "memstack"}),
    Provider("ollama", "http://localhost:11434/v1", "OLLAMA_API_KEY", False),
    Provider("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", False),
    Provider("llamacpp", "http://localhost:8080/v1", "LLAMACPP_API_KEY", False),
    Provider("lmstudio", "http://localhost:1234/v1", "LMSTUDIO_API_KEY", False, json_mode=False),
    Provider("custom", None, "MEMSTACK_CUSTOM_API_KEY", False, json_mode=False, stream_usage=False),
)

_REGISTRY: dict[str, Provider] = {row.name: row for row in _ROWS}

#: Every known provider by name (read-only view; add rows with ``register_provider``).
PROVIDERS: Mapping[str, Provider] = MappingProxyType(_REGISTRY)


def register_provider(provider: Provider) -> None:
    """Add or replace a row, e.g. a company gateway: ``Provider("gateway", "https://llm.corp/v1", "GW_KEY", True)``."""
    if not provider.name or ":" in provider.name:
        raise ConfigError(f"provider name {provider.name!r} must be non-empty and contain no ':'")
    _REGISTRY[provider.name] = provider


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: Provider
    model: str

    def __str__(self) -> str:
        return f"{self.provider.name}:{self.model}"


def get_provider(name: str) -> Provider:
    provider = PROVIDERS.get(name.strip().lower())
    if provider is None:
        raise ConfigError(
            f"unknown model provider {name!r}; use one of {', '.join(sorted(PROVIDERS))} "
            "(custom:<model> with base_url= for any other OpenAI-compatible server)"
        )
    return provider


def parse_model_spec(spec: str) -> ModelSpec:
    """``"ollama:llama3.2:3b"`` → provider ``ollama``, model ``llama3.2:3b`` (split at the first colon)."""
    name, sep, model = spec.strip().partition(":")
    if not sep or not model:
        raise ConfigError(f"model {spec!r} must be written provider:model, e.g. openai:gpt-4o-mini or ollama:llama3.2")
    return ModelSpec(get_provider(name), model)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A resolved endpoint: where to send requests and with which key and headers."""

    provider: Provider
    base_url: str
    api_key: str = field(repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)


def _env(environ: Mapping[str, str], name: str | None) -> str | None:
    if name is None:
        return None
    value = environ.get(name, "").strip()
    return value or None


def resolve_endpoint(
    provider: Provider | str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Endpoint:
    """Arguments first, then the environment (``environ``, default ``os.environ``), then the row's defaults."""
    row = provider if isinstance(provider, Provider) else get_provider(provider)
    env = os.environ if environ is None else environ
    url = base_url or _env(env, row.base_url_env) or row.base_url
    if not url:
        raise ConfigError(
            f"provider {row.name!r} has no default URL; pass base_url=... or set {row.base_url_env} "
            "(e.g. http://localhost:8000/v1)"
        )
    if not url.startswith(("http://", "https://")):
        source = "base_url" if base_url else f"${row.base_url_env}"
        raise ConfigError(f"{source} = {url!r} is not an http(s) URL; give one like http://localhost:8000/v1")
    key = api_key or _env(env, row.api_key_env)
    if key is None:
        if row.key_required:
            raise ConfigError(
                f"{row.name} needs an API key: set {row.api_key_env} or pass api_key=... "
                f"(for a local OpenAI-compatible server use base_url= with a provider that needs no key)"
            )
        key = NO_KEY
    return Endpoint(
        provider=row,
        base_url=url.rstrip("/"),
        api_key=key,
        headers=MappingProxyType({**row.default_headers, **(headers or {})}),
    )
