"""``docs/settings.md`` is the generator's output (``tests/settings_reference.py``) and names every variable memstack
reads and every model provider, so the reference cannot drift from the code."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstack.config import Config
from memstack.models.providers import PROVIDERS
from settings_reference import PAGE, render  # tests/settings_reference.py

SRC = Path(__file__).resolve().parents[1] / "src" / "memstack"
#: A variable's name written out in the code (``MEMSTACK_`` alone, or followed by ``{``/``<``, is a template).
NAME = re.compile(r"\bMEMSTACK_[A-Z0-9_]*[A-Z0-9]\b")


class _Recording(dict[str, str]):
    """The environment, noting every variable looked up."""

    def __init__(self, base: dict[str, str]) -> None:
        super().__init__(base)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)


def _documented() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_committed_page_is_the_generators_output() -> None:
    assert PAGE.exists(), "docs/settings.md is missing: python -m tests.settings_reference --write"
    assert _documented() == render(), "docs/settings.md is stale: python -m tests.settings_reference --write"


def test_every_variable_config_reads_is_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    environ = _Recording({k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")})
    monkeypatch.setattr(os, "environ", environ)
    Config.resolve()
    read = sorted(name for name in environ.read if name.startswith("MEMSTACK_"))
    assert len(read) >= 15, read  # one per setting (two for the tiers)
    missing = [name for name in read if f"`{name}`" not in _documented()]
    assert not missing, f"Config reads {missing}, which docs/settings.md does not name"


def _names_in_code() -> Iterator[tuple[str, str]]:
    for path in sorted(SRC.rglob("*.py")):
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            yield name, str(path.relative_to(SRC.parent))


def test_every_memstack_variable_the_code_names_is_documented() -> None:
    found = dict(_names_in_code())
    assert {"MEMSTACK_CUSTOM_API_KEY", "MEMSTACK_SERVER_AUTH", "MEMSTACK_NAME", "MEMSTACK_EMBED_WORKERS"} <= set(found)
    missing = sorted(f"{name} ({where})" for name, where in found.items() if f"`{name}`" not in _documented())
    assert not missing, f"docs/settings.md does not name {missing}"


def test_every_provider_is_documented_with_its_variables() -> None:
    page = _documented()
    assert {"openai", "gemini", "groq", "openrouter", "ollama", "vllm", "lmstudio", "llamacpp", "custom"} <= set(
        PROVIDERS
    )
    for row in PROVIDERS.values():
        assert f"| `{row.name}` |" in page, f"provider {row.name} is missing from docs/settings.md"
        assert f"`{row.base_url_env}`" in page and f"`{row.api_key_env}`" in page, row.name
