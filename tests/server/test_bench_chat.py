"""``memstack bench chat`` end to end, briefly: a real server process, real chat load, the server's RSS sampled, one
JSON line. It checks that the command runs and reports, not how much memory the server holds (the README has that,
from ten-minute runs)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memstack.cli import main

KEYS = {
    "backend", "clients", "users", "duration_s", "requests", "errors", "rps", "p50_ms", "p95_ms", "p99_ms",
    "rss_start_mb", "rss_warm_mb", "rss_end_mb", "rss_max_mb", "rss_idle_mb", "rss_slope_mb_per_min",
    "rss_samples_mb", "load_avg",
}  # fmt: skip


def _run(*extra: str) -> dict[str, object]:
    args = ["bench", "chat", "--clients", "3", "--duration", "4", "--warmup", "2", "--idle", "1", "--users", "5"]
    result = CliRunner().invoke(main, [*args, *extra, "--json"])
    assert result.exit_code == 0, result.output
    figures: dict[str, object] = json.loads(result.output.strip().splitlines()[-1])
    assert set(figures) >= KEYS
    return figures


def _check(figures: dict[str, object], backend: str) -> None:
    assert figures["backend"] == backend and figures["clients"] == 3 and figures["errors"] == 0
    assert isinstance(figures["requests"], int) and figures["requests"] > 0
    p50, p99 = figures["p50_ms"], figures["p99_ms"]
    assert isinstance(p50, float) and isinstance(p99, float) and 0 < p50 <= p99
    start, end, peak = figures["rss_start_mb"], figures["rss_end_mb"], figures["rss_max_mb"]
    assert isinstance(start, float) and isinstance(end, float) and isinstance(peak, float)
    assert 0 < start <= peak and 0 < end <= peak
    samples = figures["rss_samples_mb"]
    assert isinstance(samples, list) and len(samples) >= 3  # sampled every second through the run


def test_bench_chat_on_sqlite_prints_its_figures_as_the_last_line() -> None:
    figures = _run("--server-env", "MEMSTACK_RECALL_CACHE_MESSAGES=100")
    _check(figures, "sqlite")
    assert figures["server_env"] == {"MEMSTACK_RECALL_CACHE_MESSAGES": "100"}


def test_bench_chat_takes_only_memstack_settings_for_the_server() -> None:
    args = ["bench", "chat", "--duration", "1", "--server-env", "PATH=/nowhere"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "MEMSTACK_NAME=VALUE" in result.output


@pytest.mark.postgres
def test_bench_chat_on_postgresql() -> None:
    _check(_run("--backend", "postgres"), "postgres")
