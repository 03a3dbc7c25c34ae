"""The one LoCoMo reader (``memstack.evals.locomo_data``) on a small LoCoMo-shaped file written here, and what every
eval and benchmark built on it sees of the same turns."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from memstack.errors import InputError
from memstack.evals.locomo_data import dia_ids, parse_session_date, read_locomo

PHOTO = "[shares a photo: a photo of a clay vase]"


def _sample() -> dict[str, object]:
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_2_date_time": "10:00 am on 2 Sept, 2023",  # out of order on purpose; an abbreviated month
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "Back from Lisbon!"},
                {"speaker": "Ben", "text": "Welcome back."},  # no dia_id: numbered by its place
            ],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I started pottery."},
                {
                    "speaker": "Ana",
                    "dia_id": "D1:02",
                    "text": "Look what I made.",
                    "img_url": ["https://example.invalid/vase.jpg"],
                    "blip_caption": "a photo of a clay vase",
                },
                {"speaker": "Ben", "dia_id": "D:1:3", "text": "Lovely!"},
            ],
        },
        "qa": [
            {"question": "What did Ana make?", "answer": "a vase", "evidence": ["D1:2; D1:1", "D1:02"], "category": 4},
            {"question": "Who is Ana's cat?", "adversarial_answer": "Tom", "evidence": [], "category": 5},
        ],
        "observation": {
            "session_1_observation": {
                "Ana": [["Ana started pottery.", "D1:1"], ["Ana made a clay vase.", ["D1:2", "D1:01"]], ["", "D1:3"]]
            },
            "session_2_observation": {"Ana": [["Ana visited Lisbon.", "D2:1"]]},
        },
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo-shaped.json"
    path.write_text(json.dumps([_sample()]), encoding="utf-8")
    return path


def test_ids_dates_questions_and_observations(locomo_file: Path) -> None:
    (conv,) = read_locomo(locomo_file)
    assert (conv.id, conv.user_speaker, conv.other_speaker) == ("conv-x", "Ana", "Ben")
    assert [t.id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert [[t.id for t in s] for s in conv.sessions] == [["D1:1", "D1:2", "D1:3"], ["D2:1", "D2:2"]]
    assert conv.turns[0].at == datetime(2023, 5, 8, 13, 56) and conv.turns[-1].at == datetime(2023, 9, 2, 10, 0)
    assert conv.asked_at == datetime(2023, 9, 3, 10, 0)
    first, adversarial = conv.questions
    assert (first.evidence, first.answer, first.category) == (("D1:2", "D1:1"), "a vase", 4)
    assert (adversarial.evidence, adversarial.answer, adversarial.trap) == ((), "", "Tom")
    assert [(o.text, o.session, o.evidence) for o in conv.observations] == [
        ("Ana started pottery.", 1, ("D1:1",)),
        ("Ana made a clay vase.", 1, ("D1:2", "D1:1")),
        ("Ana visited Lisbon.", 2, ("D2:1",)),
    ]


def test_a_photo_is_its_caption_in_one_wording_everywhere(locomo_file: Path) -> None:
    from memstack.bench.session_memory import _exchanges
    from memstack.evals.extraction import load_turns
    from memstack.evals.locomo import _message, load_locomo

    (conv,) = read_locomo(locomo_file)
    photo = conv.turns[1]
    assert photo.content == f"Look what I made. {PHOTO}"
    assert photo.render() == f"Ana: Look what I made. {PHOTO}"
    assert conv.turns[0].content == "I started pottery."
    assert _message(load_locomo(locomo_file)[0].turns[1])["content"] == photo.content  # eval locomo's import
    assert load_turns(locomo_file)[1].text == photo.content  # eval extraction's classifier input
    assert _exchanges(conv.sessions[0], "Ana")[0].user == f"I started pottery. {photo.content}"  # the session bench


@pytest.mark.parametrize(
    ("raw", "ids"),
    [
        ("D8:6; D9:17", ["D8:6", "D9:17"]),
        ("D:11:26", ["D11:26"]),
        ("D30:05", ["D30:5"]),
        (["D1:2", "D 3 : 04"], ["D1:2", "D3:4"]),
        ("D", []),
    ],
)
def test_dia_ids_are_normalised(raw: object, ids: list[str]) -> None:
    assert dia_ids(raw) == ids


def test_session_dates() -> None:
    assert parse_session_date("7:05 pm on 1 January, 2024") == datetime(2024, 1, 1, 19, 5)
    assert parse_session_date("12:30 am on 3 Feb, 2023") == datetime(2023, 2, 3, 0, 30)
    assert parse_session_date("8 May, 2023") == datetime(2023, 5, 8)
    for bad in ("yesterday", "1:56 pm on 31 February, 2023", "1:56 pm on 8 Maybe, 2023"):
        with pytest.raises(InputError, match="session date"):
            parse_session_date(bad)


@pytest.mark.parametrize(
    ("payload", "message"),
    [("not json", "not JSON"), ("{}", "list of conversations"), ('[{"no": "conversation"}]', "LoCoMo")],
)
def test_what_is_not_locomo_says_what_to_pass(tmp_path: Path, payload: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(payload, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_locomo(path)
    with pytest.raises(InputError, match="--data"):
        read_locomo(tmp_path / "missing.json")
