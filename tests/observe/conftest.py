"""A chat model, a memory classifier and a server for the observability tests.

The scripted OpenAI-compatible server (real HTTP; it reports token usage) is imported here and nowhere else in these
tests, so a move of the testing package changes one line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.openai_server import RecordedRequest, Reply, ScriptedOpenAIServer

#: What each scripted call reports: the chat model's (priced by PRICES below) and the classifier's (no price).
CHAT_TOKENS = (1000, 200)
CLASSIFIER_TOKENS = (300, 40)
#: custom:chat at $1 / $2 per million input / output tokens; custom:classifier has no price.
PRICES = "custom:chat=1/2"
METRICS_TOKEN = "scrape-secret"
#: The type of the ``models`` fixture, for the tests' signatures.
Models = ScriptedOpenAIServer


def _chat(request: RecordedRequest) -> Reply:
    return Reply.text(f"You said: {request.last_user_message}", usage=CHAT_TOKENS)


def _classify(request: RecordedRequest) -> Reply:
    memory = {"content": "User is allergic to peanuts", "category": "fact", "confidence": 0.95}
    return Reply.json({"memories": [memory]}, usage=CLASSIFIER_TOKENS)


@pytest.fixture(scope="module")
def models() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.handle(_chat, model="chat")
        server.handle(_classify, model="classifier")
        yield server


def config_for(home: Path, models: ScriptedOpenAIServer, env: pytest.MonkeyPatch) -> Config:
    env.setenv("MEMSTACK_CUSTOM_BASE_URL", models.base_url)
    return Config.resolve(
        home=home,
        chat_model="custom:chat",
        classifier_model="custom:classifier",
        update_model="offline",
        embedder="hash:64",
        badge_wait_s=10.0,
        model_prices=PRICES,
    )


@dataclass(frozen=True)
class Rig:
    url: str
    key_a: str  # tenant "acme"
    key_b: str  # tenant "globex"

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0)


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory, models: ScriptedOpenAIServer) -> Iterator[Rig]:
    home = tmp_path_factory.mktemp("observe-home")
    with pytest.MonkeyPatch.context() as env:
        config = config_for(home, models, env)

        async def keys() -> tuple[str, str]:
            async with AsyncMemstack(config) as ms:
                return (await ms.store.keys.create("acme"))[1], (await ms.store.keys.create("globex"))[1]

        key_a, key_b = asyncio.run(keys())
        settings = ServerSettings(auth="keys", metrics_token=METRICS_TOKEN)
        with BackgroundServer(create_app(config, settings=settings)) as server:
            yield Rig(server.url, key_a, key_b)
