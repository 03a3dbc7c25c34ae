"""``memstack eval capture``: the data format, each rule of the scorer on small cases written here, and the command
end to end (offline, and with an LLM classifier on the scripted server). No score of the project's sets is pinned."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.errors import InputError
from memstack.evals.capture import load_cases
from memstack.evals.capture_score import CaptureCase, Point, StoredMemory, score_case, summarize
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

AT = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)  # a Friday
GINA = CaptureCase(
    "gina",
    "My sister Gina lives in Rome and I visit her every August.",
    AT,
    (
        Point("User's sister Gina lives in Rome.", ("sister", "Gina", "Rome"), "fact"),
        Point("User visits their sister Gina every August.", ("visit", "Gina", "every August"), "fact"),
    ),
    ("2027",),
)


def _score(case: CaptureCase, *contents: str) -> list[tuple[tuple[int, ...], tuple[str, ...]]]:
    scored = score_case(case, [StoredMemory(c, "fact") for c in contents])
    return [(m.recalls, m.distorted) for m in scored.memories]


def test_a_point_is_recalled_by_a_memory_holding_every_key() -> None:
    scored = score_case(
        GINA,
        [
            StoredMemory("User's sister Gina lives in Rome.", "fact"),
            StoredMemory("User visits Gina every August.", "fact"),
        ],
    )
    assert scored.recalled == (True, True)
    assert [m.recalls for m in scored.memories] == [(0,), (1,)]
    assert not any(m.distorted for m in scored.memories)
    # "every August" is a phrase: both words, in order (two keys of three: a part changed)
    ((recalls, reasons),) = _score(GINA, "User visits Gina in August every year.")
    assert recalls == () and reasons == ("partial: User visits their sister Gina every August.",)


def test_keys_are_stems_alternatives_and_ordinals() -> None:
    case = CaptureCase(
        "bday", "My birthday is March 3rd", AT, (Point("User's birthday is on March 3.", ("birthday", "3"), "fact"),)
    )
    assert _score(case, "User's birthdays are on 3 March.") == [((0,), ())]  # stems; "3rd" is 3
    mom = CaptureCase("mom", "I call my mum on Sundays", AT, (Point("t", ("mother|mum|mom", "Sunday"), "fact"),))
    assert _score(mom, "User calls their MUM every Sunday.") == [((0,), ())]


def test_a_key_word_cut_by_hand_matches_the_words_it_begins() -> None:
    milk = CaptureCase("milk", "lactose intolerant here", AT, (Point("t", ("lactose", "intoleran"), "fact"),))
    assert _score(milk, "User is lactose intolerant.") == [((0,), ())]
    # three letters are too few to be a stem cut by hand: "cat" does not find "category"
    cat = CaptureCase("cat", "I have a cat", AT, (Point("t", ("cat",), "fact"),))
    assert _score(cat, "User likes every category of film.") == [((), ())]


def test_an_invented_or_shifted_date_is_a_distortion() -> None:
    ((recalls, reasons),) = _score(GINA, "User visits Gina every August 2027.")
    assert recalls == (1,) and reasons[0] == "date: 2027" and reasons[1] == "not: 2027"
    ((_, reasons),) = _score(GINA, "User's sister Gina lives in Rome since Monday.")  # a weekday never said
    assert reasons == ("date: monday",)
    swim = CaptureCase("swim", "I swim every Monday", AT, (Point("t", ("swim", "Monday"), "fact"),))
    assert _score(swim, "User swims on Mondays.") == [((0,), ())]  # a plural weekday is the weekday said
    assert _score(swim, "User swims every Monday, first at 30 November.")[0][1] == ("date: first, 30, november",)
    # "may" is a month only beside a number
    assert _score(swim, "User may swim every Monday.") == [((0,), ())]


def test_a_date_in_a_point_text_or_the_messages_own_date_is_not_invented() -> None:
    dentist = CaptureCase(
        "dentist",
        "dentist tomorrow at 3",
        AT,
        (Point("User has a dentist appointment on Saturday, 28 November 2026.", ("dentist", "28"), "schedule"),),
    )
    assert _score(dentist, "User has a dentist appointment on Saturday, 28 November 2026 at 3.") == [((0,), ())]
    japan = CaptureCase(
        "japan", "I went to Japan two weeks ago", AT, (Point("User went to Japan.", ("Japan",), "fact"),)
    )
    assert _score(japan, "User went to Japan about two weeks before 27 November 2026.") == [((0,), ())]
    assert _score(japan, 'User said on Friday, 27 November 2026: "I went to Japan two weeks ago"') == [((0,), ())]
    # the message's date is allowed only as a whole date: a day of it alone is a shifted date
    assert _score(japan, "User went to Japan on 13 November 2026.")[0][1] == ("date: 13, november, 2026",)


def test_a_phrase_the_case_rules_out_is_a_distortion() -> None:
    cats = CaptureCase(
        "cats",
        "I'm allergic to cats but I have a dog named Biscuit.",
        AT,
        (Point("User is allergic to cats.", ("allergic", "cat"), "fact"),),
        ("cat named Biscuit",),
    )
    assert _score(cats, "User is allergic to cats and has a cat named Biscuit.") == [
        ((0,), ("not: cat named Biscuit",))
    ]


def test_a_ruled_out_date_is_not_found_in_the_messages_own_date() -> None:
    """A case rules out "2026" against an invented year; the day the message was said, written beside the user's
    words, is not one."""
    trip = CaptureCase(
        "trip", "planning a trip to Lisbon in March", AT, (Point("t", ("Lisbon", "March"), "goal"),), ("2026",)
    )
    assert _score(trip, "User is planning a trip to Lisbon in March (said on Friday, 27 November 2026).") == [
        ((0,), ())
    ]
    assert _score(trip, "User is planning a trip to Lisbon in March 2026.")[0][1] == ("date: 2026", "not: 2026")


def test_a_ruled_out_phrase_is_matched_word_for_word_not_by_stems() -> None:
    ines = CaptureCase(
        "ines",
        "my sister-in-law Ines is a lawyer in Madrid, and I lived in Osaka in my twenties",
        AT,
        (Point("User's sister-in-law Ines is a lawyer.", ("Ines", "lawyer"), "fact"),),
        ("sister Ines", "lives in Osaka|lives in Japan"),
    )
    assert _score(ines, "User's sister-in-law Ines is a lawyer in Madrid.", "User lived in Osaka.") == [
        ((0,), ()),
        ((), ()),
    ]
    assert _score(ines, "User's sister Ines is a lawyer.", "User lives in Japan.") == [
        ((0,), ("not: sister Ines",)),
        ((), ("not: lives in Osaka|lives in Japan",)),
    ]


def test_a_negation_the_message_does_not_have_is_a_distortion() -> None:
    case = CaptureCase("meat", "I eat meat on Fridays.", AT, (Point("t", ("meat", "Friday"), "fact"),))
    assert _score(case, "User doesn't eat meat on Fridays.") == [((0,), ("negation",))]
    assert _score(case, "User no longer eats meat on Fridays.") == [((0,), ("negation",))]
    negated = CaptureCase("no-meat", "I don't eat meat on Fridays.", AT, case.points)
    assert _score(negated, "User never eats meat on Fridays.") == [((0,), ())]
    bare = CaptureCase("bare", "i dont eat meat on fridays", AT, case.points)  # chat drops the apostrophe
    assert _score(bare, "User doesn't eat meat on Fridays.") == [((0,), ())]


def test_a_fact_with_a_part_dropped_is_a_distortion() -> None:
    cousin = CaptureCase(
        "cousin",
        "My cousin Arjun works at Google in Zurich.",
        AT,
        (Point("User's cousin Arjun works at Google in Zurich.", ("cousin", "Arjun", "Google", "Zurich"), "fact"),),
    )
    ((recalls, reasons),) = _score(cousin, "User works at Google in Zurich.")  # the subject lost: 2 of 4 keys
    assert recalls == () and reasons == ()  # not more than half
    ((recalls, reasons),) = _score(cousin, "Arjun works at Google in Zurich.")  # 3 of 4
    assert recalls == () and reasons == ("partial: User's cousin Arjun works at Google in Zurich.",)
    # a memory that recalls another point is not partial
    both = CaptureCase("both", cousin.message, AT, (*cousin.points, Point("t", ("Arjun",), "fact")))
    assert _score(both, "Arjun works at Google in Zurich.") == [((1,), ())]


def test_a_memory_recalling_two_points_is_fused_and_the_summary_counts_everything() -> None:
    none = CaptureCase("none", "What's the capital of Mongolia?", AT, ())
    scored = [
        score_case(GINA, [StoredMemory("User's sister Gina lives in Rome and User visits Gina every August.", "fact")]),
        score_case(none, [StoredMemory("User asked about Mongolia on Monday.", "general")]),
    ]
    assert scored[0].memories[0].fused and scored[0].recalled == (True, True)
    summary = summarize(scored)
    assert (summary["cases"], summary["points"], summary["stored"]) == (2, 2, 2)
    assert (summary["point_recall"], summary["precision"], summary["distortion"]) == (1.0, 0.5, 0.5)
    assert (summary["fused"], summary["distorted_by"]["date"]) == (1, 1)
    assert summary["per_category"]["fact"] | {} == {
        "cases": 1,
        "points": 2,
        "stored": 1,
        "point_recall": 1.0,
        "precision": 1.0,
        "distorted": 0,
        "distortion": 0.0,
        "fused": 1,
        "fused_rate": 1.0,
    }
    assert (summary["no_point_cases"], summary["no_point_cases_stored"], summary["no_point_stored"]) == (1, 1, 1)


# -- the data format and the command


ROWS: list[dict[str, Any]] = [
    {
        "id": "nurse",
        "message": "I'm a nurse in Porto.",
        "at": "2026-11-27T10:00:00+00:00",
        "points": [{"text": "User is a nurse in Porto.", "keys": ["nurse", "Porto"], "category": "fact"}],
    },
    {
        # 23:30 in New York is already the 29th in UTC: the user said "tomorrow" on 28 February 2024
        "id": "dentist",
        "message": "My dentist appointment is tomorrow.",
        "at": "2024-02-28T23:30:00-05:00",
        "points": [
            {
                "text": "User's dentist appointment is tomorrow.",
                "keys": ["dentist", "tomorrow"],
                "category": "schedule",
            }
        ],
        "not": ["1 March"],
    },
    {"id": "capital", "message": "What's the capital of Mongolia?", "at": "2026-11-27T10:00:00+00:00", "points": []},
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _last(output: str) -> dict[str, Any]:
    value = json.loads(output.strip().splitlines()[-1])
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json", "is not JSON"),
        ('{"id": "x", "message": "hi"}', "lacks at"),
        ('{"id": "x", "message": "hi", "at": "yesterday"}', "not an ISO 8601 time"),
        ('{"id": "x", "message": "hi", "at": "2026-11-27T10:00:00"}', "has no UTC offset"),
        ('{"id": "x", "message": "hi", "at": "2026-11-27T10:00:00Z", "points": [{"text": "t"}]}', "'keys'"),
        (
            '{"id": "x", "message": "hi", "at": "2026-11-27T10:00:00Z", '
            '"points": [{"text": "t", "keys": ["k"], "category": "mood"}]}',
            "unknown category",
        ),
        ('{"id": "x", "message": "hi", "at": "2026-11-27T10:00:00Z", "not": "2027"}', "must be a list"),
    ],
)
def test_malformed_lines_are_named(tmp_path: Path, line: str, error: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=error) as raised:
        load_cases(path)
    assert f"{path}:3" in str(raised.value)


def test_ids_are_unique_and_a_file_holds_cases(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="used twice"):
        load_cases(_write(tmp_path / "twice.jsonl", [ROWS[0], ROWS[0]]))
    with pytest.raises(InputError, match="holds no cases"):
        load_cases(_write(tmp_path / "empty.jsonl", []))


def test_the_command_runs_each_case_through_a_chat_turn_at_its_time(tmp_path: Path) -> None:
    data = _write(tmp_path / "cases.jsonl", ROWS)
    report = tmp_path / "report.jsonl"
    args = ["eval", "capture", "--data", str(data), "--json", "--no-progress", "--report", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = _last(result.stdout)
    assert summary["classifier"] == "offline:rules-v1"
    assert (summary["cases"], summary["points"], summary["point_recall"]) == (3, 2, 1.0)
    assert (summary["distortion"], summary["no_point_cases"], summary["no_point_cases_stored"]) == (0.0, 1, 0)
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["nurse", "dentist", "capital"]
    (dentist,) = rows[1]["memories"]
    assert "(said on Wednesday, 28 February 2024)" in dentist["content"]
    assert dentist["recalls"] == [0] and dentist["distorted"] == []


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def test_with_an_llm_classifier_the_model_decides(tmp_path: Path, server: ScriptedOpenAIServer) -> None:
    def found(*contents: str) -> Reply:
        return Reply.json({"memories": [{"content": c, "category": "fact", "confidence": 0.9} for c in contents]})

    server.script(
        "clf",
        found("User likes hiking in the hills."),  # the warm-up turn
        found("User has been a nurse in Porto since 2019."),  # a year the user never said
    )
    data = _write(tmp_path / "cases.jsonl", ROWS[:1])
    args = ["eval", "capture", "--data", str(data), "--classifier", "custom:clf", "--json", "--no-progress"]
    result = CliRunner().invoke(main, args, env={"MEMSTACK_CUSTOM_BASE_URL": server.base_url})
    assert result.exit_code == 0, result.output
    summary = _last(result.stdout)
    assert summary["classifier"] == "llm:custom:clf"
    assert (summary["stored"], summary["point_recall"], summary["distortion"]) == (1, 1.0, 1.0)
    assert server.pending("clf") == 0


def test_a_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "capture", "--data", str(tmp_path / "nope.jsonl"), "--json"])
    assert result.exit_code == 1 and "cannot read capture file" in result.output
