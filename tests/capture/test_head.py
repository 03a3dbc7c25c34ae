"""The capture head: recall where the rules refuse (bare statements, casual standing instructions), nothing kept from
messages with nothing to keep, and the head's file and its limits."""

import json

import numpy as np
import pytest

from memstack.capture.clauses import head_reading, restore_be
from memstack.capture.head import LABELS, CaptureHead, load_capture_head
from memstack.capture.instructions import PREFERENCE_FRAME, framed
from memstack.capture.offline import OfflineClassifier
from memstack.embed import get_embedder
from memstack.errors import ConfigError
from memstack.types import Category

from .support import AT


async def test_a_bare_statement_is_kept_in_the_users_words(classifier: OfflineClassifier) -> None:
    (c,) = await classifier.classify("vegan for 6 years", at=AT)
    assert c.content == "User said: vegan for 6 years" and c.category is Category.FACT


@pytest.mark.parametrize("message", ["short answers pls"])
async def test_a_casual_standing_instruction_is_a_preference(classifier: OfflineClassifier, message: str) -> None:
    (c,) = await classifier.classify(message, at=AT)
    assert c.category is Category.PREFERENCE and c.content.startswith(PREFERENCE_FRAME)


@pytest.mark.parametrize(
    "message",
    [
        "Write me a poem about the sea.",
        "translate this into Spanish",
        "for now keep it short",
        "What's the capital of Peru?",
        "ugh, long day",
        "If I won the lottery I'd buy a boat.",
        "Tell me a joke.",
        "Scorpios are supposed to be loyal.",
        "the weather is lovely today",
        "lol",
        "Thanks, that helped!",
    ],
)
async def test_a_message_with_nothing_to_keep_stores_nothing(classifier: OfflineClassifier, message: str) -> None:
    assert await classifier.classify(message, at=AT) == []


async def test_the_head_is_used_only_with_the_embedder_it_reads() -> None:
    embedder = get_embedder("hash:64")
    clf = OfflineClassifier(embedder)
    assert await clf.classify("lactose intolerant.", at=AT) == []  # the rules alone: no first-person word
    await clf.aclose()
    await embedder.aclose()


def test_restore_be_puts_a_verb_only_before_a_bare_predicate() -> None:
    assert restore_be("lactose intolerant") == "I'm lactose intolerant"
    assert restore_be("a nurse at the city hospital") == "I'm a nurse at the city hospital"
    assert restore_be("left-handed") == "I'm left-handed"
    assert restore_be("vegetarian since 2019") == "I'm vegetarian since 2019"
    # an adjective before a noun is a noun phrase, not a predicate ("I'm shellfish allergy")
    for clause in (
        "Tea > coffee",
        "Dental appointment Friday",
        "Two dogs, one cat",
        "allergic is what he is",
        "shellfish allergy",
        "italian food all day",
    ):
        assert restore_be(clause) is None


def test_framed_refuses_what_is_about_now_or_the_thing_at_hand() -> None:
    assert framed("default to TypeScript") == f"{PREFERENCE_FRAME}default to TypeScript."
    assert framed("call me Jo pls") == f"{PREFERENCE_FRAME}call User Jo."
    for sentence in ("translate this into Spanish", "for now keep it short", "this time answer in French", "I'm Jo"):
        assert framed(sentence) is None


def test_the_shipped_head_reads_its_labels_and_records_how_it_was_chosen() -> None:
    head = load_capture_head()
    units = 384 if head.hidden is None else head.hidden[0].shape[0]
    assert head.model == "local:minilm" and head.weights.shape == (len(LABELS), units)
    assert head.hidden is None or head.hidden[0].shape == (units, 384)
    assert 0.5 <= head.threshold < 1.0
    assert head.about["out_of_fold"]["folds"] >= 5 and "threshold_rule" in head.about
    again = CaptureHead.from_json(head.to_json())
    vectors = np.eye(384, dtype=np.float32)[:3]
    assert np.allclose(again.probabilities(vectors), head.probabilities(vectors), atol=1e-4)


def test_a_head_with_a_hidden_layer_round_trips_and_a_plain_softmax_file_still_reads() -> None:
    rng = np.random.default_rng(0)
    layer = (rng.standard_normal((8, 384)).astype(np.float32), rng.standard_normal(8).astype(np.float32))
    weights, bias = rng.standard_normal((len(LABELS), 8)).astype(np.float32), np.zeros(len(LABELS), np.float32)
    head = CaptureHead("local:minilm", weights, bias, 0.9, {}, layer)
    vectors = rng.standard_normal((3, 384)).astype(np.float32)
    again = CaptureHead.from_json(head.to_json())
    assert again.hidden is not None
    assert np.allclose(again.probabilities(vectors), head.probabilities(vectors), atol=1e-3)
    plain = json.loads(CaptureHead("local:minilm", np.zeros((len(LABELS), 384), np.float32), bias, 0.9).to_json())
    del plain["format"]  # a file written before the format was recorded: a softmax over the embedding
    assert CaptureHead.from_json(json.dumps(plain)).hidden is None


def test_a_head_file_newer_than_the_code_is_refused() -> None:
    text = json.loads(load_capture_head().to_json())
    text["format"] = 99
    with pytest.raises(ConfigError, match="upgrade"):
        CaptureHead.from_json(json.dumps(text))


def test_a_head_trained_on_other_labels_is_refused() -> None:
    text = load_capture_head().to_json().replace('"instruction"', '"command"')
    with pytest.raises(ConfigError, match="train_capture"):
        CaptureHead.from_json(text)


@pytest.mark.parametrize(
    ("message", "content"),
    [
        ("fyi diabetic", "User is diabetic"),
        ("oh and pregnant", "User is pregnant"),
        ("btw epileptic", "User is epileptic"),
    ],
)
async def test_one_word_after_a_discourse_marker_is_kept(
    classifier: OfflineClassifier, message: str, content: str
) -> None:
    """Wordings held out of the head's training (``capture_heldout``): the marker says the word is the user's."""
    (c,) = await classifier.classify(message, at=AT)
    assert c.content == content and c.category is Category.FACT


@pytest.mark.parametrize("message", ["also pizza", "btw friday", "fyi the printer", "also agreed", "btw oops"])
async def test_a_marker_before_a_word_about_nothing_keeps_nothing(classifier: OfflineClassifier, message: str) -> None:
    assert await classifier.classify(message, at=AT) == []


@pytest.mark.parametrize(
    ("clause", "read"),
    [
        ("allergic to shellfish", "I'm allergic to shellfish"),
        ("lactose intolerant", "I'm lactose intolerant"),
        ("a nurse on nights", "I'm a nurse on nights"),
        # not a bare predicate: read as written
        ("shellfish allergy", "shellfish allergy"),
        ("short answers pls", "short answers pls"),
        ("she's allergic to cats", "she's allergic to cats"),
    ],
)
def test_the_head_reads_a_bare_predicate_with_its_subject_put_back(clause: str, read: str) -> None:
    assert head_reading(clause) == read


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("I bank with Triodos.", "banks with Triodos"),  # a fact with no cue word the rules know
        ("I commute by ferry", "commutes by ferry"),
        ("I genuinely cannot stand olives.", "cannot stand olives"),  # a dislike the rules do not name
    ],
)
async def test_a_first_person_statement_the_rules_keep_too_weakly_is_read_by_the_head(
    classifier: OfflineClassifier, message: str, words: str
) -> None:
    (c,) = await classifier.classify(message, at=AT)
    assert c.content.startswith("User ") and words in c.content


async def test_a_first_person_standing_instruction_the_rules_mark_down_is_kept_in_its_frame(
    classifier: OfflineClassifier,
) -> None:
    message = "when you write emails for me default to British spelling, unless I say otherwise"
    (c,) = await classifier.classify(message, at=AT)
    assert c.category is Category.PREFERENCE and c.content.startswith(PREFERENCE_FRAME) and "British" in c.content


@pytest.mark.parametrize("message", ["I was just kidding about that", "I said the other one, the blue one"])
async def test_a_weak_first_person_remark_stays_unkept(classifier: OfflineClassifier, message: str) -> None:
    assert await classifier.classify(message, at=AT) == []


async def test_a_bare_fact_the_head_is_fairly_sure_of_is_kept(classifier: OfflineClassifier) -> None:
    """The threshold keeps at most 5% of the written negatives out of fold, where 3% lost a third of the memories of
    the held-out split (see ``tests/capture/train_capture.py``)."""
    (c,) = await classifier.classify("two kids, both in primary school", at=AT)
    assert c.content == "User said: two kids, both in primary school" and c.category is Category.FACT


@pytest.mark.parametrize(
    ("message", "content"),
    [
        ("allergic to ibuprofen", "User is allergic to ibuprofen"),
        ("allergic to aspirin.", "User is allergic to aspirin."),
    ],
)
async def test_a_bare_predicate_a_rule_cue_names_is_kept_at_the_heads_even_odds(
    classifier: OfflineClassifier, message: str, content: str
) -> None:
    """Under the head's threshold but over even odds, and read by the rules as "I'm allergic to …": kept, as surely as
    one the head keeps alone (the capture pipeline stores from 0.7)."""
    (c,) = await classifier.classify(message, at=AT)
    assert c.content == content and c.confidence >= 0.7


@pytest.mark.parametrize("message", ["hilarious lol", "so jealous", "ridiculous"])
async def test_a_reaction_read_with_i_m_is_not_a_bare_predicate_to_keep(
    classifier: OfflineClassifier, message: str
) -> None:
    assert await classifier.classify(message, at=AT) == []
