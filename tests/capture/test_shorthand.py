"""Chat's shorthand read faithfully: a standing language instruction said in that language, a shouted sentence, a
gerund that is the subject, and a remark after "so" that is no fact (each in several wordings, with negatives)."""

import pytest

from memstack.capture.clauses import clauses, restore_subject
from memstack.capture.instructions import might_instruct, standing_instruction


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
        ("I'm vegan so no dairy please", ["I'm vegan", "no dairy please"]),
    ],
)
def test_a_remark_after_so_is_no_clause(sentence: str, parts: list[str]) -> None:
    assert clauses(sentence, lambda t: t.endswith("please")) == parts
