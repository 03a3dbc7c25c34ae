import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest

from memstack.capture import ClassifierFailure, ClassifyContext, get_classifier
from memstack.capture.llm import LLMClassifier
from memstack.prompts import get_prompt
from memstack.types import Category
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

AT = datetime(2024, 5, 9, 14, 0, tzinfo=UTC)
MODEL = "classifier-mini"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def classifier(server: ScriptedOpenAIServer, **options: Any) -> LLMClassifier:
    return LLMClassifier(server.chat_model(MODEL), owns_model=True, **options)


async def test_the_seed_contract_round_trip(server: ScriptedOpenAIServer) -> None:
    server.script(
        MODEL,
        Reply.json(
            {
                "memories": [
                    {"content": "User's quiz is next Thursday", "category": "schedule", "confidence": 0.9},
                    {
                        "content": "User is a sophomore at UCLA",
                        "category": "fact",
                        "confidence": 0.95,
                        "explicit": True,
                    },
                    {"content": "User might like tea", "category": "preference", "confidence": 0.4},
                ]
            }
        ),
    )
    clf = classifier(server)
    ctx = ClassifyContext(recent=(("assistant", "How is school going?"),))
    found = await clf.classify("I'm a sophomore at UCLA and my quiz is next Thursday", at=AT, context=ctx)
    await clf.aclose()
    assert [c.content for c in found] == [
        "User is a sophomore at UCLA",
        "User's quiz is next Thursday (said on Thursday, 9 May 2024)",
    ]
    fact, quiz = found
    assert fact.explicit and fact.category is Category.FACT and fact.expires_at is None
    assert quiz.category is Category.SCHEDULE and quiz.expires_at is not None
    assert quiz.expires_at.date() == date(2024, 5, 17)
    (request,) = server.chat_requests
    prompt = request.last_user_message or ""
    assert "Thursday, 09 May 2024" in prompt and "I'm a sophomore at UCLA" in prompt
    assert "assistant: How is school going?" in prompt and request.response_format == {"type": "json_object"}
    assert clf.name == f"llm:openai:{MODEL}"


async def test_malformed_json_is_retried_once(server: ScriptedOpenAIServer) -> None:
    server.script(
        MODEL,
        Reply.malformed_json(),
        {"memories": [{"content": "User likes tea", "category": "preference", "confidence": 0.8}]},
    )
    clf = classifier(server)
    found = await clf.classify("I like tea", at=AT)
    await clf.aclose()
    assert [c.content for c in found] == ["User likes tea"] and not clf.failures
    assert len(server.chat_requests) == 2


async def test_wrong_shape_twice_gives_up_and_records(server: ScriptedOpenAIServer) -> None:
    seen: list[ClassifierFailure] = []
    server.script(MODEL, {"facts": []}, Reply.malformed_json())
    clf = classifier(server, on_failure=seen.append)
    assert await clf.classify("I like tea", at=AT) == []
    await clf.aclose()
    (failure,) = clf.failures
    assert failure.error == "MalformedResponse" and failure.attempts == 2 and seen == [failure]


async def test_server_errors_retry_then_give_up(server: ScriptedOpenAIServer) -> None:
    server.script(MODEL, Reply.error(503, "overloaded"), Reply.error(500, "boom"))
    clf = classifier(server)
    assert await clf.classify("I like tea", at=AT) == []
    assert clf.failures[-1].error == "ProviderError" and clf.failures[-1].attempts == 2
    server.script(MODEL, Reply.error(500, "blip"), {"memories": []})
    assert await clf.classify("I like tea", at=AT) == [] and len(clf.failures) == 1
    await clf.aclose()


async def test_a_slow_model_times_out_without_blocking_the_chat(server: ScriptedOpenAIServer) -> None:
    server.script(MODEL, Reply.json({"memories": []}).after(2.0), Reply.json({"memories": []}).after(2.0))
    clf = classifier(server, timeout_s=0.3)
    start = time.perf_counter()
    assert await clf.classify("I like tea", at=AT) == []
    assert time.perf_counter() - start < 1.5
    assert clf.failures[-1].error == "ProviderTimeout"
    await clf.aclose()


async def test_unusable_items_are_skipped_not_fatal(server: ScriptedOpenAIServer) -> None:
    server.script(
        MODEL,
        {
            "memories": [
                {"content": "", "category": "fact", "confidence": 0.9},
                {"content": "User rows", "category": "sports", "confidence": 0.9},
                {"content": "User swims", "category": "fact", "confidence": "high"},
                "not an object",
            ]
        },
    )
    clf = classifier(server)
    found = await clf.classify("I row and swim", at=AT)
    await clf.aclose()
    assert [(c.content, c.category) for c in found] == [("User rows", Category.GENERAL)]


def test_the_prompt_renders_and_the_factory_builds_the_llm_classifier(server: ScriptedOpenAIServer) -> None:
    text = get_prompt("capture.classify").render(today="Thursday, 09 May 2024", context="(none)", message="hi")
    assert '{"memories": [{"content"' in text and "task requests" in text
    clf = get_classifier(f"openai:{MODEL}", base_url=server.base_url, api_key="sk-test")
    assert isinstance(clf, LLMClassifier) and clf.name == f"llm:openai:{MODEL}"
