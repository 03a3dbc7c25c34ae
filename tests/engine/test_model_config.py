"""A configured model that cannot be built (a missing API key, an unknown provider) is scoped to chat: the engine
opens, memory management works, and every chat call raises a ConfigError naming the setting and the variable to set,
until the configuration is fixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack import AsyncMemstack
from memstack.cli import main
from memstack.config import Config
from memstack.errors import ConfigError

NO_KEY = "openai:gpt-4o-mini"


@pytest.fixture(autouse=True)
def no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize(
    ("setting", "variable"),
    [("classifier_model", "MEMSTACK_CLASSIFIER_MODEL"), ("summarizer_model", "MEMSTACK_SUMMARIZER_MODEL")],
)
async def test_memory_management_works_and_chat_names_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, variable: str
) -> None:
    config = Config(home=tmp_path, embedder="hash:64", **{setting: NO_KEY})
    async with AsyncMemstack(config) as ms:
        added = await ms.add("ana", "Prefers green tea", category="preference")
        assert [m.id for m in await ms.list("ana")] == [added.id]
        assert await ms.wait_idle(0.1)
        for call in (lambda: ms.chat("ana", "Hello"), lambda: ms.end_session("ana", "ses_x")):
            with pytest.raises(ConfigError) as raised:
                await call()
            message = str(raised.value)
            assert setting in message and f"${variable}" in message and "OPENAI_API_KEY" in message
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            ms.chat_stream("ana", "Hello")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # fixed: the chat parts open at the next call
        assert ms.chat_model_name == "offline:responder"


async def test_an_unknown_provider_is_named_at_the_first_chat_call(tmp_path: Path) -> None:
    async with AsyncMemstack(Config(home=tmp_path, embedder="hash:64", classifier_model="nosuch:model")) as ms:
        assert await ms.count("ana") == 0
        with pytest.raises(ConfigError, match=r"classifier model 'nosuch:model' \(classifier_model"):
            await ms.chat("ana", "Hello")


async def test_a_chat_model_without_its_key_fails_the_turn_naming_chat_model(tmp_path: Path) -> None:
    async with AsyncMemstack(Config(home=tmp_path, embedder="hash:64", chat_model=NO_KEY)) as ms:
        with pytest.raises(
            ConfigError, match=r"chat model 'openai:gpt-4o-mini' \(chat_model, \$MEMSTACK_CHAT_MODEL\).*OPENAI_API_KEY"
        ):
            await ms.chat("ana", "Hello")
        assert await ms.count("ana") == 0


def test_memories_commands_work_with_a_misconfigured_classifier(tmp_path: Path) -> None:
    env = {
        "MEMSTACK_HOME": str(tmp_path / "home"),
        "MEMSTACK_EMBEDDER": "hash:64",
        "MEMSTACK_CLASSIFIER_MODEL": NO_KEY,
        "MEMSTACK_SUMMARIZER_MODEL": NO_KEY,
    }
    runner = CliRunner()
    added = runner.invoke(main, ["memories", "add", "--user", "ana", "Prefers green tea"], env=env)
    assert added.exit_code == 0 and "Saved mem_" in added.output, added.output
    listed = runner.invoke(main, ["memories", "list", "--user", "ana", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    assert [m["content"] for m in json.loads(listed.stdout)] == ["Prefers green tea"]


def test_the_blocking_api_opens_chat_late_from_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstack import Memstack
    from memstack.context import default_agent

    with Memstack(Config(home=tmp_path, embedder="hash:64", classifier_model=NO_KEY)) as ms:
        assert ms.list("ana") == []
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            ms.register_agent(default_agent())
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        assert ms.register_agent(default_agent()).name == "assistant"  # not on the engine's loop: resumes there
        assert ms.wait_idle(5.0)
