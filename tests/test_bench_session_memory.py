"""``memstack bench session-memory`` on a tiny LoCoMo-format file written here (the real data stays outside)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack.bench.session_memory import run_bench, run_service_bench
from memstack.cli import main
from memstack.errors import InputError


def _conversation() -> list[dict[str, object]]:
    turns = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "My dog is called Pixel and I never feed him chocolate."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Pixel is a great name!"},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "I started pottery classes last week."},
        {"speaker": "Ben", "dia_id": "D1:4", "text": "How are the pottery classes going?"},
        {"speaker": "Ana", "dia_id": "D1:5", "text": "Great, thanks."},
    ]
    second = [
        {"speaker": "Ana", "dia_id": "D2:1", "text": "We moved to Lisbon."},
        {"speaker": "Ben", "dia_id": "D2:2", "text": "Lisbon is lovely."},
    ]
    return [
        {
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": turns,
                "session_2_date_time": "10:00 am on 2 June, 2023",
                "session_2": second,
            },
            "observation": {"session_1_observation": {"Ana": [["Ana has a dog named Pixel.", "D1:1"]]}},
        }
    ]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(_conversation()), encoding="utf-8")
    return path


async def test_offline_pipeline_report(data: Path) -> None:
    report = await run_bench(data)
    assert (report["conversations"], report["sessions"], report["exchanges"]) == (1, 2, 4)
    assert report["observations"] == 1 and report["observation_coverage"]["transcript"] == 1.0
    assert report["ms_per_turn_p50"] is not None and report["summarizer"] == "offline:extractive"


async def test_service_report_on_sqlite(data: Path) -> None:
    report = await run_service_bench(data)
    assert (report["store"], report["turns"], report["searches"]) == ("sqlite", 4, 1)
    for key in ("begin_ms_p50", "begin_ms_p99", "finish_ms_p50", "finish_ms_p99", "search_ms_p50"):
        assert isinstance(report[key], float) and report[key] >= 0


def test_command_prints_one_json_line(data: Path) -> None:
    args = ["bench", "session-memory", "--data", str(data), "--store", "sqlite", "--json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["turns"] == 4
    result = CliRunner().invoke(main, ["bench", "session-memory", "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["exchanges"] == 4


async def test_missing_data_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--data"):
        await run_service_bench(tmp_path / "missing.json")
