"""``memstack eval updates``: the data format, the scorer, and the command end to end on tiny synthetic files
(offline, and with an LLM classifier on the scripted server). No score of the project's own sets is pinned here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.errors import InputError
from memstack.evals.updates import CaseOutcome, load_cases, score
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

CASES = [
    {
        "id": "moved",
        "kind": "update",
        "memory": "User lives in Paris.",
        "category": "fact",
        "message": "I moved to Berlin last month.",
    },
    {
        "id": "sister",
        "kind": "compatible",
        "memory": "User lives in Paris.",
        "category": "fact",
        "message": "My sister moved to Berlin.",
    },
]
KEYS = [
    "cases",
    "updates",
    "updates_applied",
    "update_rate",
    "updates_superseded",
    "updates_stored",
    "updates_badge",
    "compatible",
    "compatible_superseded",
    "compatible_stored",
    "p50_ms",
    "p95_ms",
    "classifier",
    "judge",
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _last(output: str) -> dict[str, Any]:
    value = json.loads(output.strip().splitlines()[-1])
    assert isinstance(value, dict)
    return value


def test_the_scorer_counts_what_each_kind_needs() -> None:
    outcomes = [
        CaseOutcome("a", "update", superseded=True, stored=True, ms=10.0, badge=("updated",)),
        CaseOutcome("b", "update", superseded=True, stored=False, ms=20.0),  # retired, the news not kept
        CaseOutcome("c", "update", superseded=False, stored=True, ms=30.0, badge=("created",)),
        CaseOutcome("d", "compatible", superseded=False, stored=True, ms=40.0),
        CaseOutcome("e", "compatible", superseded=True, stored=True, ms=50.0),
    ]
    result = score(outcomes, classifier="offline:rules-v1")
    assert list(result) == KEYS
    assert (result["cases"], result["updates"], result["updates_applied"], result["update_rate"]) == (5, 3, 1, 0.3333)
    assert (result["updates_superseded"], result["updates_stored"], result["updates_badge"]) == (2, 2, 1)
    assert (result["compatible"], result["compatible_superseded"], result["compatible_stored"]) == (2, 1, 2)
    assert (result["p50_ms"], result["p95_ms"]) == (30.0, 50.0)
    assert [o.correct for o in outcomes] == [True, False, False, True, False]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json", "is not JSON"),
        ("[1, 2]", "holds list"),
        ('{"id": "x", "kind": "update", "memory": "m", "category": "fact"}', "lacks message"),
        ('{"id": "x", "kind": "maybe", "memory": "m", "category": "fact", "message": "hi"}', "kind 'maybe'"),
        ('{"id": "x", "kind": "update", "memory": "m", "category": "mood", "message": "hi"}', "unknown category"),
    ],
)
def test_malformed_lines_are_named(tmp_path: Path, line: str, error: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(CASES[0]) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=error) as raised:
        load_cases(path)
    assert f"{path}:3" in str(raised.value)


def test_ids_are_unique_and_a_file_holds_cases(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="used twice"):
        load_cases(_write(tmp_path / "twice.jsonl", [CASES[0], CASES[0]]))
    with pytest.raises(InputError, match="holds no cases"):
        load_cases(_write(tmp_path / "empty.jsonl", []))
    assert [c.id for c in load_cases(_write(tmp_path / "ok.jsonl", CASES))] == ["moved", "sister"]


def test_the_command_runs_each_case_through_a_chat_turn(tmp_path: Path) -> None:
    data = _write(tmp_path / "cases.jsonl", CASES)
    report = tmp_path / "report.jsonl"
    args = ["eval", "updates", "--data", str(data), "--json", "--no-progress", "--report", str(report)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = _last(result.stdout)
    assert list(summary) == KEYS and summary["classifier"] == "offline:rules-v1"
    assert (summary["cases"], summary["updates"], summary["compatible"]) == (2, 1, 1)
    rows = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["moved", "sister"]
    outcomes = [CaseOutcome(**{k: v for k, v in r.items() if k not in ("applied", "correct")}) for r in rows]
    assert {
        k: v for k, v in score(outcomes, classifier="offline:rules-v1", judge="offline").items() if "ms" not in k
    } == {k: v for k, v in summary.items() if "ms" not in k}
    moved, sister = rows
    assert moved["superseded"] and moved["stored"] and moved["badge"] == ["updated"]  # moved: Paris is history
    assert "the cross-encoder reads it as news" in moved["note"] and "User lives in Paris." not in moved["memories"]
    assert not sister["superseded"] and "User lives in Paris." in sister["memories"]  # the sister's news adds


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


def test_with_an_llm_classifier_the_model_decides(tmp_path: Path, server: ScriptedOpenAIServer) -> None:
    def found(content: str) -> Reply:
        return Reply.json({"memories": [{"content": content, "category": "fact", "confidence": 0.9}]})

    server.script(
        "judge",
        found("User likes hiking in the hills."),  # the warm-up turn
        found("User moved to Berlin."),
        Reply.json({"decisions": [{"fact": "f1", "action": "supersede", "memory": "m1", "reason": "moved"}]}),
        found("User's sister moved to Berlin."),
        Reply.json({"decisions": [{"fact": "f1", "action": "add", "memory": None, "reason": "the sister's news"}]}),
    )
    data = _write(tmp_path / "cases.jsonl", CASES)
    args = ["eval", "updates", "--data", str(data), "--classifier", "custom:judge", "--json", "--no-progress"]
    result = CliRunner().invoke(main, args, env={"MEMSTACK_CUSTOM_BASE_URL": server.base_url})
    assert result.exit_code == 0, result.output
    summary = _last(result.stdout)
    assert summary["classifier"] == summary["judge"] == "llm:custom:judge"  # unset, the judge follows the classifier
    assert (summary["updates_applied"], summary["compatible_superseded"]) == (1, 0)
    assert server.pending("judge") == 0


def test_a_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["eval", "updates", "--data", str(tmp_path / "nope.jsonl"), "--json"])
    assert result.exit_code == 1 and "cannot read updates file" in result.output
