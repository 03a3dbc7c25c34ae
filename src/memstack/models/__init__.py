"""Chat models: one wire protocol (``ChatModel``), endpoints as data (``PROVIDERS``), typed failures.

Pick a model with a string and use it as an async resource::

    from memstack.models import Message, get_model

    async with get_model("openai:gpt-4o-mini") as model:          # key from $OPENAI_API_KEY
        reply = await model.complete([Message.system("Be brief."), Message.user("Hi!")])
        data = await model.complete_json([Message.user("Give me JSON with a 'greeting' key")])
        async for chunk in model.stream([Message.user("Tell me a story")]):
            print(chunk.text, end="")

``ollama:llama3.2``, ``vllm:…``, ``llamacpp:…``, ``lmstudio:…``, ``groq:…``, ``openrouter:…``, ``gemini:…`` work the
same way; ``custom:<model>`` with ``base_url=`` reaches any other OpenAI-compatible server. Retries are explicit:
``await with_retry(lambda: model.complete_json(msgs), attempts=2)``.
"""

from __future__ import annotations

from collections.abc import Mapping

from memstack.models.base import JSON_OBJECT, ChatModel, ToolChoice, parse_json_object, request_json
from memstack.models.messages import (
    ChatChunk,
    ChatResponse,
    Message,
    MessageLike,
    ToolCall,
    ToolSpec,
    Usage,
    as_messages,
    collect,
)
from memstack.models.openai_compat import OpenAIChatModel
from memstack.models.providers import (
    PROVIDERS,
    Endpoint,
    ModelSpec,
    Provider,
    get_provider,
    parse_model_spec,
    register_provider,
    resolve_endpoint,
)
from memstack.models.retry import is_retryable, with_retry

__all__ = [
    "JSON_OBJECT",
    "PROVIDERS",
    "ChatChunk",
    "ChatModel",
    "ChatResponse",
    "Endpoint",
    "Message",
    "MessageLike",
    "ModelSpec",
    "OpenAIChatModel",
    "Provider",
    "ToolCall",
    "ToolChoice",
    "ToolSpec",
    "Usage",
    "as_messages",
    "collect",
    "get_model",
    "get_provider",
    "is_retryable",
    "parse_json_object",
    "parse_model_spec",
    "register_provider",
    "request_json",
    "resolve_endpoint",
    "with_retry",
]


def get_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    json_mode: bool | None = None,
) -> OpenAIChatModel:
    """The chat model named ``provider:model``; ``ConfigError`` for an unknown provider or a missing key.

    ``base_url`` / ``api_key`` override ``$MEMSTACK_<PROVIDER>_BASE_URL`` and the provider's key variable;
    ``timeout`` is the default deadline in seconds of each call.
    """
    parsed = parse_model_spec(spec)
    return OpenAIChatModel(
        parsed.model,
        provider=parsed.provider,
        base_url=base_url,
        api_key=api_key,
        headers=headers,
        timeout=timeout,
        json_mode=json_mode,
    )
