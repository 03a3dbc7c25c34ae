"""The update judge's attribute head (``memstack.capture.judge.attributes``) and the offline judge's gate over it: a
statement and a memory read as the same single-valued attribute of the user's life supersede below the judge's main
threshold, at the head's lower one; a visit or someone else's news does not."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from memstack.capture.judge import JudgeItem
from memstack.capture.judge.attributes import CARD_FILE, NONE, WEIGHTS_FILE, AttributeHead, load_attribute_head
from memstack.capture.judge.cross import file_sha256
from memstack.capture.judge.newshead import load_news_head
from memstack.capture.judge.offline import LearnedJudge
from memstack.embed import Embedder, get_embedder
from memstack.errors import ConfigError
from memstack.types import Candidate, Category, ScoredMemory

from .test_updates import _memory

# The cross-encoder and the news head score this pair far below even the lower threshold (0.07).
QUIET = ("User has switched to decaf for good.", "User drinks strong espresso every morning.")


def _files() -> tuple[str, bytes]:
    data = resources.files("memstack.capture.judge") / "data"
    return (data / CARD_FILE).read_text(encoding="utf-8"), (data / WEIGHTS_FILE).read_bytes()


def _eager(*, margin: float = 0.5, threshold: float = 0.0, model: str = "local:minilm") -> AttributeHead:
    """A head that reads every sentence as the user's home city (zero weights, a large bias for it)."""
    weights = np.zeros((2, 384), dtype=np.float32)
    return AttributeHead(model, ("home_city", NONE), weights, np.array([12.0, 0.0], np.float32), margin, threshold)


async def _replaces(judge: LearnedJudge, embedder: Embedder, new: str, old: str) -> tuple[bool, str]:
    vectors = await embedder.embed([new, old])
    hit = ScoredMemory(_memory(old), float(vectors[0] @ vectors[1]))
    (verdict,) = await judge.judge([JudgeItem(Candidate(new, Category.FACT, 0.9), (hit,))])
    return verdict.replaces, verdict.reason


def test_the_shipped_head_matches_its_card_and_records_its_figures() -> None:
    """The weights are the ones the card's sha256 names; the card says which vectors the head reads, its labels, the
    held-out accuracy of its recipe and the calibration: more development updates applied than the judge alone,
    with at most 2% of the compatible cases superseded."""
    head = load_attribute_head()
    card = json.loads(_files()[0])
    data = resources.files("memstack.capture.judge") / "data"
    assert file_sha256(Path(str(data / WEIGHTS_FILE))) == card["sha256"]
    assert head.model == get_embedder("local:minilm").name
    assert len(head.labels) >= 26 and head.labels[-1] == NONE and head.weights.shape == (len(head.labels), 384)
    assert 0.0 < head.threshold < load_news_head().threshold and 0.0 < head.margin < 1.0
    assert head.about["held_out_of_the_written_sentences"]["accuracy"] >= 0.8
    calibration = head.about["calibration"]
    alone, gated = calibration["judge_alone"], calibration["with_the_attribute_gate"]
    assert gated["updates_applied"] > alone["updates_applied"]
    assert gated["compatible_superseded"] <= 0.02 * gated["compatible"]


def test_a_damaged_replaced_or_newer_head_is_a_config_error_that_says_what_to_do() -> None:
    card, weights = _files()
    assert AttributeHead.from_files(card, weights).labels == load_attribute_head().labels
    other = _eager().weights_bytes()
    with pytest.raises(ConfigError, match=r"sha256.*reinstall"):
        AttributeHead.from_files(card, other)
    with pytest.raises(ConfigError, match=r"sha256.*reinstall"):
        AttributeHead.from_files(card, weights[:-10])
    body = json.loads(card)
    with pytest.raises(ConfigError, match="upgrade memstack"):
        AttributeHead.from_files(json.dumps({**body, "format": 99}), weights)
    with pytest.raises(ConfigError, match=r"malformed.*reinstall"):
        AttributeHead.from_files(json.dumps({k: v for k, v in body.items() if k != "margin"}), weights)
    with pytest.raises(ConfigError, match="malformed"):
        AttributeHead.from_files("{not json", weights)
    short = {**body, "labels": body["labels"][:3]}
    with pytest.raises(ConfigError, match="shapes or labels"):
        AttributeHead.from_files(json.dumps(short), weights)


async def test_the_head_reads_wordings_it_was_never_trained_on(minilm: Embedder) -> None:
    """Sentences written for this test, in none of the training files: each is read as its attribute, and a trip,
    a neighbour's news or a feeling as none. (The head reads what a sentence is about more than whose it is: "User's
    friend moved to Aberdeen." reads as a home city; the judge's gate leaves such news to ``about_someone_else`` and
    the pair readers, below.)"""
    head = load_attribute_head()
    said = {
        "User makes their home in Aberdeen these days.": "home_city",
        "I don't eat fish or meat anymore": "diet",
        "respond only in Norwegian please": "reply_language",
        "User's car is a grey Hyundai i30.": "vehicle",
        "User is visiting Swansea this weekend.": NONE,
        "my neighbour sold his van": NONE,
        "I felt really low today": NONE,
    }
    read = head.read(np.asarray(await minilm.embed(list(said)), dtype=np.float32))
    assert [label for label, _ in read] == list(said.values())


# Sentences written for the test below, in none of the training files: per attribute added in the head's second
# round, a new wording of it (a memory, and chat told sideways: a replacement, an ending) and a hard negative on the
# same topic (a one-off event, a visit, a reading on the way to a goal, someone else's errand).
NEW_ATTRIBUTES = {
    "manager": (
        ["User's new team leader is Ingrid.", "Bjorn runs our team now, so he's my boss"],
        "my boss is away at a conference",
    ),
    "school_stage": (
        ["my son moved up to year 4 this September", "our youngest has begun nursery school"],
        "my son's school had a fundraiser",
    ),
    "religious_practice": (
        ["I've started going to the Saturday evening service at the chapel", "I no longer attend synagogue"],
        "we visited a beautiful chapel in Tuscany",
    ),
    "learning_style": (
        ["I absorb things best from written guides, not screencasts", "I learn most when a tutor quizzes me"],
        "I watched a screencast on git today",
    ),
    "fitness_goal": (
        ["my target weight is 77 kilos now", "I want to be able to run 10 miles by spring"],
        "I weighed 79 this morning",
    ),
    "language_learning": (
        ["I've taken up Portuguese lessons", "I quit my Mandarin course"],
        "I picked up a few words of Portuguese on holiday",
    ),
}


async def test_the_head_reads_the_attributes_added_in_new_wordings_and_leaves_their_look_alikes(
    minilm: Embedder,
) -> None:
    """A new manager, a child's school stage, a religious practice, how the user learns, a fitness target and the
    language being learnt are single-valued attributes of their own (a new value ends the old one): each new wording
    is read as its attribute at the gate's margin, and the hard negative on the same topic is not (none, or under the
    margin, so the gate never fires on it)."""
    head = load_attribute_head()
    for attribute in NEW_ATTRIBUTES:
        assert attribute in head.labels, attribute
    said = [text for wordings, _ in NEW_ATTRIBUTES.values() for text in wordings]
    read = head.read(np.asarray(await minilm.embed(said), dtype=np.float32))
    expected = [attribute for attribute, (wordings, _) in NEW_ATTRIBUTES.items() for _ in wordings]
    assert [(text, label) for text, (label, _) in zip(said, read, strict=True)] == list(
        zip(said, expected, strict=True)
    )
    assert all(p >= head.margin for _, p in read), list(zip(said, read, strict=True))
    negatives = [negative for _, negative in NEW_ATTRIBUTES.values()]
    for (attribute, _), text, (label, p) in zip(
        NEW_ATTRIBUTES.items(),
        negatives,
        head.read(np.asarray(await minilm.embed(negatives), dtype=np.float32)),
        strict=True,
    ):
        assert label == NONE or p < head.margin, (attribute, text, label, p)


async def test_sideways_news_of_the_same_attribute_supersedes_below_the_main_threshold(minilm: Embedder) -> None:
    """Each pair scores under the news head's threshold (0.74, 0.77, 0.82 against 0.85), so the judge without the
    attribute head keeps the memory; both sentences are about the same attribute, so now it is superseded, and the
    history note names the attribute."""
    judge = LearnedJudge(minilm)
    for old, new, attribute in [
        ("User uses an Android phone.", "User got an iPhone.", "phone"),
        ("User's salary is 40,000.", "User got a raise to 46,000.", "income"),
        ("User lives in Exeter.", "User is settling into their new home in Swansea.", "home city"),
    ]:
        replaced, why = await _replaces(judge, minilm, new, old)
        assert replaced, (old, new, why)
        assert f"about the user's {attribute}" in why


async def test_a_visit_or_someone_elses_news_of_the_same_attribute_leaves_the_memory(minilm: Embedder) -> None:
    judge = LearnedJudge(minilm)
    for old, new in [
        ("User lives in Exeter.", "User is visiting Swansea this weekend."),
        ("User lives in Exeter.", "User's brother moved to Swansea."),
        ("User drives a Honda Jazz.", "User's sister bought a Skoda Octavia."),
    ]:
        replaced, why = await _replaces(judge, minilm, new, old)
        assert not replaced, (old, new, why)


async def test_the_gate_needs_the_same_attribute_sure_enough_and_the_users_own_news(minilm: Embedder) -> None:
    """A head that reads everything as the home city, at a lower threshold of zero, supersedes a pair the pair
    readers leave; not when its margin is out of reach, not for news about someone else, and not with an embedder
    whose vectors it was not trained on (or none)."""
    assert not (await _replaces(LearnedJudge(minilm), minilm, *QUIET))[0]
    assert (await _replaces(LearnedJudge(minilm, attributes=_eager()), minilm, *QUIET))[0]
    assert not (await _replaces(LearnedJudge(minilm, attributes=_eager(margin=2.0)), minilm, *QUIET))[0]
    eager = LearnedJudge(minilm, attributes=_eager())
    assert not (await _replaces(eager, minilm, "User's sister moved to Berlin.", "User lives in Paris."))[0]
    other = get_embedder("hash:64")
    try:
        assert LearnedJudge(other, attributes=_eager()).attributes is None
    finally:
        await other.aclose()
    assert LearnedJudge(None, attributes=_eager()).attributes is None
    elsewhere = LearnedJudge(minilm, attributes=_eager(model="openai:text-embedding-3-small"))
    assert elsewhere.attributes is None
    assert not (await _replaces(elsewhere, minilm, *QUIET))[0]


async def test_news_of_one_relative_never_ends_a_memory_about_another(minilm: Embedder) -> None:
    """A relative's move ends the memory of where that relative lives; news of one relative leaves a memory about
    another, however high the pair readers score it (they read the change, not whose it is: both pairs below scored
    0.89 and 0.84 and were superseded)."""
    judge = LearnedJudge(minilm)
    assert (await _replaces(judge, minilm, "User's brother moved back to Halifax.", "User's brother lives in Ottawa."))[
        0
    ]
    for old, new in [
        ("User's sister is married to Tom.", "User's brother got divorced."),
        ("User's son plays the violin.", "User's daughter gave up the violin."),
    ]:
        replaced, why = await _replaces(judge, minilm, new, old)
        assert not replaced, (old, new, why)
