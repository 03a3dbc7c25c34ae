"""``memstack bench http`` end to end on a tiny data set: a real server process, real load, one JSON line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memstack.cli import main

KEYS = {"endpoint", "clients", "duration_s", "requests", "errors", "rps", "p50_ms", "p99_ms"}


def test_bench_http_prints_its_figures_as_the_last_line() -> None:
    args = ["bench", "http", "--clients", "4", "--duration", "1", "--warmup", "0.5", "--users", "3"]
    result = CliRunner().invoke(main, [*args, "--per-user", "5", "--queries", "0", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.strip().splitlines()[-1])
    assert set(figures) >= KEYS
    assert figures["endpoint"] == "POST /v1/users/{user_id}/memories/search" and figures["clients"] == 4
    assert figures["requests"] > 0 and figures["errors"] == 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] and figures["rps"] > 0
    assert figures["distinct_queries"] == "all"
    check_cold(figures, users=3)
    # the model's own limit, measured in the run: batches of four (the clients), beside the server's throughput
    assert figures["limit_embed_per_s"] > 0 and figures["limit_batch_ms"] > 0
    assert figures["rps_over_limit"] == round(figures["rps"] / figures["limit_embed_per_s"], 3)


def check_cold(figures: dict[str, object], *, users: int) -> None:
    """The first search of each user after the server started, then the same again: one per user, all answered."""
    assert figures["cold_requests"] == users and figures["cold_errors"] == 0
    assert 0 < figures["cold_p50_ms"] <= figures["cold_p99_ms"]  # type: ignore[operator]
    assert figures["cold_first_ms"] > 0  # type: ignore[operator]
    assert 0 < figures["repeat_p50_ms"] <= figures["repeat_p99_ms"]  # type: ignore[operator]
    assert figures["load_avg"] is None or figures["load_avg"] >= 0  # type: ignore[operator]


@pytest.mark.postgres
def test_bench_http_runs_two_workers_on_postgresql() -> None:
    args = ["bench", "http", "--backend", "postgres", "--workers", "2", "--clients", "4", "--duration", "2"]
    result = CliRunner().invoke(main, [*args, "--warmup", "1", "--users", "3", "--per-user", "5", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output.strip().splitlines()[-1])
    assert figures["backend"] == "postgres" and figures["workers"] == 2
    assert figures["requests"] > 0 and figures["errors"] == 0
    # the server's CPU is its supervisor's and both workers' together: the supervisor alone spends almost none
    assert figures["server_cpu_ms"] is not None and figures["server_cpu_ms"] > 0.5
    check_cold(figures, users=3)


def test_bench_http_refuses_several_workers_on_sqlite() -> None:
    result = CliRunner().invoke(main, ["bench", "http", "--workers", "2", "--duration", "1"])
    assert result.exit_code == 1 and "backend='postgres'" in result.output
