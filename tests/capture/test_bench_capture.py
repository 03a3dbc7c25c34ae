"""``memstack bench capture``: the command runs end to end and its last line is the JSON contract."""

from __future__ import annotations

import json

from click.testing import CliRunner

from memstack.cli import main


def test_bench_capture_prints_the_added_latency_as_json() -> None:
    args = ["bench", "capture", "--messages", "30", "--chat-ms", "5", "--warmup", "3", "--embedder", "hash:64"]
    args.append("--json")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    line = json.loads(result.output.strip().splitlines()[-1])
    assert {"messages", "p50_ms", "p99_ms", "start_p50_ms", "await_p50_ms", "background_p50_ms", "saved"} <= set(line)
    assert line["messages"] == 30 and line["classifier"] == "offline:rules-v1"
    assert line["saved"] == 0 and line["failed"] == 0  # the no-save path really saved nothing
    assert 0 < line["p50_ms"] <= line["p99_ms"] and line["p50_ms"] < 5.0
    # the detection itself, awaited directly: cold (the first messages after start), then warm
    assert line["cold_messages"] == 20 and line["detect_saved"] == 0 and line["detect_failed"] == 0
    assert 0 < line["detect_cold_p50_ms"] <= line["detect_cold_p99_ms"]
    assert line["detect_first_ms"] <= line["detect_cold_p99_ms"]  # the first is one of the cold messages
    assert 0 < line["detect_p50_ms"] <= line["detect_p99_ms"]
    assert line["load_avg"] is None or line["load_avg"] >= 0


def test_bench_capture_cold_count_is_bounded_by_the_distinct_messages() -> None:
    args = ["bench", "capture", "--messages", "3", "--chat-ms", "0", "--warmup", "0", "--embedder", "hash:64"]
    result = CliRunner().invoke(main, [*args, "--cold", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output.strip().splitlines()[-1])["cold_messages"] == 2
    result = CliRunner().invoke(main, [*args, "--cold", "31"])
    assert result.exit_code == 2 and "--cold" in result.output
