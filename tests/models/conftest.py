from collections.abc import Iterator

import pytest

from memstack_testing.openai_server import ScriptedOpenAIServer


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted
