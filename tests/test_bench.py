"""``memstack bench retrieval``: its data, its measurements and its JSON line, on data sizes fit for a test suite."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from memstack.bench.retrieval import _WARMUP, RetrievalConfig, _query_plan, synthetic_user
from memstack.cli import main
from memstack.errors import InputError

KEYS = [
    "backend",
    "users",
    "per_user",
    "dim",
    "k",
    "queries",
    "p50_ms",
    "p99_ms",
    "recall",
    "numpy_p50_ms",
    "numpy_p99_ms",
    "insert_per_s",
    "cold_queries",
    "cold_p50_ms",
    "cold_p99_ms",
    "cold_recall",
    "load_avg",
]


def distinct_users(cfg: RetrievalConfig) -> int:
    """The users the timed queries search: each is searched cold once."""
    return len({u for u, _, _ in list(_query_plan(cfg))[_WARMUP:]})


def check_cold(data: dict[str, object], cfg: RetrievalConfig) -> None:
    assert data["cold_queries"] == distinct_users(cfg)
    assert 0 <= data["cold_p50_ms"] <= data["cold_p99_ms"]  # type: ignore[operator]
    assert data["cold_recall"] == 1.0  # a cold search is as exact as a warm one
    assert data["load_avg"] is None or data["load_avg"] >= 0  # type: ignore[operator]


def run_bench(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["bench", "retrieval", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    last = result.stdout.strip().splitlines()[-1]
    data: dict[str, object] = json.loads(last)
    assert list(data) == KEYS
    return data


def test_synthetic_users_are_reproducible_clustered_unit_vectors() -> None:
    a = synthetic_user(0, 3, 200, 64)
    assert a.shape == (200, 64) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a, synthetic_user(0, 3, 200, 64))
    assert not np.array_equal(a, synthetic_user(0, 4, 200, 64))
    sims = a @ a.T
    np.fill_diagonal(sims, -1)
    # every memory has a close neighbour (its cluster), while random 64-d directions are near-orthogonal
    assert float(np.median(sims.max(axis=1))) > 0.5
    assert float(np.median(sims)) < 0.2


def test_bad_sizes_are_input_errors() -> None:
    with pytest.raises(InputError, match="--per-user"):
        RetrievalConfig(per_user=0)
    result = CliRunner().invoke(main, ["bench", "retrieval", "--users", "0"])
    assert result.exit_code != 0 and "--users" in result.output


@pytest.mark.postgres
def test_postgres_bench_prints_one_json_line(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_DATABASE_URL", postgres_url)  # the session's server, not a second one
    data = run_bench("--backend", "postgres", "--users", "6", "--per-user", "60", "--queries", "30", "--k", "5")
    assert data["backend"] == "postgres" and (data["users"], data["per_user"], data["queries"]) == (6, 60, 30)
    assert data["dim"] == 384 and data["k"] == 5
    assert data["recall"] == 1.0  # users this small are searched exactly
    for key in ("p50_ms", "p99_ms", "numpy_p50_ms", "numpy_p99_ms", "insert_per_s"):
        assert isinstance(data[key], float) and data[key] > 0, key
    assert data["p50_ms"] <= data["p99_ms"]  # type: ignore[operator]
    check_cold(data, RetrievalConfig(backend="postgres", users=6, per_user=60, queries=30, k=5))


def test_sqlite_bench_prints_one_json_line() -> None:
    data = run_bench("--backend", "sqlite", "--users", "5", "--per-user", "80", "--queries", "25", "--k", "10")
    assert data["backend"] == "sqlite" and (data["users"], data["per_user"], data["queries"]) == (5, 80, 25)
    assert data["recall"] == 1.0  # exact search
    assert 0 < data["p50_ms"] <= data["p99_ms"]  # type: ignore[operator]
    check_cold(data, RetrievalConfig(users=5, per_user=80, queries=25, k=10))


def test_sqlite_cache_defaults_to_the_whole_data_set() -> None:
    cfg = RetrievalConfig(users=1000, per_user=500, dim=384)
    assert cfg.sqlite_cache_mb * 2**20 >= 1000 * 500 * 384 * 4
    assert RetrievalConfig(cache_mb=64).sqlite_cache_mb == 64


def test_erase_bench_prints_one_json_line() -> None:
    args = ["bench", "erase", "--memories", "20", "--turns", "3", "--others", "3", "--per-other", "5", "--runs", "2"]
    result = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert len(summary["runs"]) == 2 and summary["median_s"] >= 0 and summary["memories"] == 20
