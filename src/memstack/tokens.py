"""Token counting with the target model family's real BPE (offline, via ``bpe-openai``)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["TokenCounter", "encoding_for"]

_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")


def encoding_for(model: str | None) -> str:
    """``o200k_base`` for current OpenAI families and unknown models, ``cl100k_base`` for GPT-4/3.5 and
    most open models' approximations. The provider prefix (``openai:``) is ignored."""
    name = (model or "").split(":", 1)[-1].lower()
    if name.startswith(_O200K_PREFIXES) or not name:
        return "o200k_base"
    if name.startswith(("gpt-4", "gpt-3.5", "text-embedding")):
        return "cl100k_base"
    return "o200k_base"


@lru_cache(maxsize=4)
def _encoding(name: str) -> Any:
    import bpe_openai

    return bpe_openai.get_encoding(name)


class TokenCounter:
    """Counts tokens of text for one model family; cheap to create, encodings are shared."""

    def __init__(self, model: str | None = None) -> None:
        self.encoding_name = encoding_for(model)
        self._enc = _encoding(self.encoding_name)

    def count(self, text: str) -> int:
        if not text:
            return 0
        return len(self._enc.encode_ordinary(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        ids = self._enc.encode_ordinary(text)
        if len(ids) <= max_tokens:
            return text
        return str(self._enc.decode(ids[:max_tokens]))
