"""Chat's shorthand read faithfully: a standing language instruction said in that language, a shouted sentence, a
gerund that is the subject, and a remark after "so" that is no fact (each in several wordings, with negatives)."""

import pytest

from memstack.capture.clauses import clauses, restore_subject
from memstack.capture.instructions import might_instruct, standing_instruction
from memstack.capture.rewrite import third_person


@pytest.mark.parametrize(
    ("sentence", "language"),
    [
        ("ab sofort bitte immer auf Englisch antworten", "English"),
        ("von nun an schreib mir auf Spanisch", "Spanish"),
        ("de ahora en adelante contéstame en francés", "French"),
        ("dorénavant répondez en italien s'il vous plaît", "Italian"),
        ("d'ora in poi rispondi in portoghese", "Portuguese"),
        ("vanaf nu antwoord in het nederlands", None),  # an article between: not read (left to the head)
        ("voortaan antwoord op nederlands", "Dutch"),
    ],
)
def test_a_language_instruction_in_that_language(sentence: str, language: str | None) -> None:
    assert might_instruct(sentence)
    expected = None if language is None else f"User's preference for replies: reply in {language}."
    assert standing_instruction(sentence, lasting_only=True) == expected


@pytest.mark.parametrize(
    "sentence",
    ["antworte auf Deutsch: wie geht's", "responde en español a esta pregunta", "réponds en français, juste ici"],
)
def test_a_one_off_language_request_is_not_a_standing_instruction(sentence: str) -> None:
    assert standing_instruction(sentence, lasting_only=True) is None


@pytest.mark.parametrize(
    ("clause", "restored"),
    [
        ("GOT A NEW JOB TODAY", "I've got a new job today"),
        ("MOVED TO OSLO", "I moved to oslo"),
        ("Moved to Oslo", "I moved to Oslo"),
        ("cooking dinner puts me in a good mood", "cooking dinner puts me in a good mood"),
        ("running marathons costs a fortune", "running marathons costs a fortune"),
    ],
)
def test_shouting_and_gerund_subjects(clause: str, restored: str) -> None:
    assert restore_subject(clause) == restored


@pytest.mark.parametrize(
    ("sentence", "parts"),
    [
        ("I'm a nurse so it's always busy", ["I'm a nurse"]),
        ("I work from home so that's nice", ["I work from home"]),
        ("I'm a contractor so admin stuff is endless", ["I'm a contractor"]),
        ("I work nights so my sleep is a mess", ["I work nights", "my sleep is a mess"]),
        ("I'm busy so it's been a while since I ran", ["I'm busy so it's been a while since I ran"]),
        ("I'm vegan so no dairy please", ["I'm vegan", "no dairy please"]),
    ],
)
def test_a_remark_after_so_is_no_clause(sentence: str, parts: list[str]) -> None:
    assert clauses(sentence, lambda t: t.endswith("please")) == parts


@pytest.mark.parametrize(
    ("clause", "restored"),
    [
        ("wanna learn the cello", "I wanna learn the cello"),
        ("gonna run my first 10k in spring", "I'm gonna run my first 10k in spring"),
        ("trying to cut down on sugar", "I'm trying to cut down on sugar"),
        ("been learning Greek for two years", "I've been learning Greek for two years"),
        ("sprained my wrist last month", "I sprained my wrist last month"),
        ("been there", "been there"),
        ("gonna be a great night", "gonna be a great night"),
        ("gotta renew my passport", "gotta renew my passport"),
        ("need a recipe for tonight", "need a recipe for tonight"),
    ],
)
def test_a_wish_a_duration_or_an_injury_gets_its_subject_back(clause: str, restored: str) -> None:
    assert restore_subject(clause) == restored


def test_a_wish_in_chat_reads_in_the_third_person() -> None:
    assert third_person(restore_subject("wanna learn the cello")) == "User wants to learn the cello"
