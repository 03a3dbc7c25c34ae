from collections.abc import AsyncIterator
from datetime import date

import pytest

from memstack.capture import ClassifyContext, get_classifier
from memstack.capture.offline import OfflineClassifier
from memstack.embed import get_embedder
from memstack.types import Category

from .support import AT, CountingEmbedder


@pytest.fixture(scope="module")
async def classifier() -> AsyncIterator[OfflineClassifier]:
    clf = OfflineClassifier(CountingEmbedder(get_embedder("local:minilm")))
    await clf.classify("I love hiking.", at=AT)  # load the model and the exemplars once
    yield clf
    await clf.aclose()


async def test_a_schedule_keeps_its_words_dated_and_expires_after_its_day(classifier: OfflineClassifier) -> None:
    (c,) = await classifier.classify("My quiz is next Thursday", at=AT)
    assert c.category is Category.SCHEDULE and c.confidence >= 0.7
    assert c.content == "User's quiz is next Thursday (said on Thursday, 9 May 2024)"
    assert c.expires_at is not None and c.expires_at.date() == date(2024, 5, 17)
    assert c.observed_at == AT and not c.explicit


@pytest.mark.parametrize(
    ("message", "category", "content"),
    [
        ("I'm a sophomore at UCLA", Category.FACT, "User is a sophomore at UCLA"),
        ("I prefer short explanations", Category.PREFERENCE, "User prefers short explanations"),
        ("I want to ace my physics final", Category.GOAL, "User wants to ace their physics final"),
        ("Visual explanations help me learn", Category.LEARNINGSTYLE, "Visual explanations help User learn"),
    ],
)
async def test_seed_examples(classifier: OfflineClassifier, message: str, category: Category, content: str) -> None:
    (c,) = await classifier.classify(message, at=AT)
    assert (c.category, c.content) == (category, content)
    assert c.expires_at is None


async def test_explicit_save_is_marked_and_confident(classifier: OfflineClassifier) -> None:
    (c,) = await classifier.classify("Remember that I'm allergic to peanuts", at=AT)
    assert c.explicit and c.confidence == 1.0 and c.content == "User is allergic to peanuts"


async def test_the_no_save_path_embeds_nothing(classifier: OfflineClassifier) -> None:
    counter = classifier._embedder
    assert isinstance(counter, CountingEmbedder)
    before = counter.texts
    for message in ("Can you explain recursion?", "Thanks!", "What is 2+2?", "ok cool"):
        assert await classifier.classify(message, at=AT) == []
    assert counter.texts == before
    # an imperative is read for its meaning (a standing instruction or a task), and a task is not kept
    assert await classifier.classify("Write a haiku about autumn", at=AT) == []
    assert counter.texts == before + 1


async def test_chit_chat_with_first_person_words_is_not_saved(classifier: OfflineClassifier) -> None:
    for message in ("I agree, that makes sense.", "I'm so happy for you!", "I'm a bit tired right now."):
        assert await classifier.classify(message, at=AT) == []


async def test_requests_and_filler_are_not_stored(classifier: OfflineClassifier) -> None:
    message = "Finally, give me a checklist for my exam week."
    assert await classifier.classify(message, at=AT) == []
    message = "I'm vegetarian, by the way. Finally give me a checklist of the mechanisms to review before the exam."
    assert [c.content for c in await classifier.classify(message, at=AT)] == ["User is vegetarian"]


async def test_several_facts_in_one_message(classifier: OfflineClassifier) -> None:
    found = await classifier.classify("I work as a nurse. I also love baking sourdough on weekends.", at=AT)
    assert {c.category for c in found} == {Category.FACT, Category.PREFERENCE}


async def test_context_is_accepted_and_factory_defaults_offline() -> None:
    clf = get_classifier(None, embedder=get_embedder("local:minilm"))
    assert clf.name == "offline:rules-v1"
    ctx = ClassifyContext(recent=(("assistant", "Where do you live these days?"),))
    found = await clf.classify("I live in Lisbon with my partner", at=AT, context=ctx)
    assert [c.content for c in found] == ["User lives in Lisbon with their partner"]
    await clf.aclose()
