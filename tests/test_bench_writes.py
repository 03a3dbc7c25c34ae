"""``memstack bench ingest`` and ``memstack bench freshness``: they run on sizes fit for a test suite and print one JSON
line with their keys (never their timings, which depend on the machine); the synthetic conversations have LoCoMo's
shape."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack.bench._talk import synthetic_conversations
from memstack.bench.ingest import IngestBenchConfig
from memstack.cli import main
from memstack.errors import InputError

INGEST_KEYS = [
    "backend", "data", "embedder", "conversations", "sessions", "turns", "exchanges", "memories", "seconds",
    "turns_per_s", "exchanges_per_s", "memories_per_s", "session_p50_ms", "session_p99_ms", "session_max_ms",
    "cold_session_ms", "limit_embed_per_s", "turns_per_s_over_limit", "load_avg_start", "load_avg_end",
]  # fmt: skip
FRESHNESS_KEYS = [
    "backend", "embedder", "samples", "users", "memories", "k", "poll_ms", "found", "not_saved", "timed_out",
    "p50_ms", "p95_ms", "max_ms", "sent_p50_ms", "sent_p95_ms", "limit_search_p50_ms", "p50_over_limit",
    "load_avg_start", "load_avg_end",
]  # fmt: skip


def run_bench(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["bench", *args, "--embedder", "hash:64", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def test_synthetic_conversations_have_locomos_shape_and_are_reproducible() -> None:
    conversations = synthetic_conversations(3, seed=5)
    assert conversations == synthetic_conversations(3, seed=5) and conversations != synthetic_conversations(3, seed=6)
    for conv in conversations:
        assert 19 <= len(conv.sessions) <= 32 and 300 <= len(conv.turns) <= 1100
        assert {t.speaker for t in conv.turns} == {conv.user_speaker, conv.other_speaker}
        assert 15 <= statistics.fmean(len(t.content.split()) for t in conv.turns) <= 35
        assert 0.1 <= sum(1 for t in conv.turns if t.caption) / len(conv.turns) <= 0.3
        dates = [s[0].at for s in conv.sessions]
        assert dates == sorted(dates) and len(set(dates)) == len(dates)
    texts = [t.content for c in conversations for t in c.turns]
    assert len(set(texts)) > 0.8 * len(texts)  # mostly texts of their own, short reactions repeated now and then


def test_bad_sizes_are_input_errors() -> None:
    with pytest.raises(InputError, match="--conversations"):
        IngestBenchConfig(conversations=0)
    with pytest.raises(InputError, match="backend"):
        IngestBenchConfig(backend="mysql")


def check_ingest(data: dict[str, object], backend: str) -> None:
    assert list(data) == INGEST_KEYS
    assert data["backend"] == backend and data["data"] == "synthetic" and data["conversations"] == 2
    assert data["sessions"] == 4 and data["turns"] >= data["exchanges"] > 0  # type: ignore[operator]
    for key in ("turns_per_s", "exchanges_per_s", "limit_embed_per_s", "turns_per_s_over_limit", "cold_session_ms"):
        assert isinstance(data[key], float) and data[key] > 0, key
    assert data["session_p50_ms"] <= data["session_p99_ms"] <= data["session_max_ms"]  # type: ignore[operator]


def test_ingest_bench_prints_one_json_line() -> None:
    check_ingest(run_bench("ingest", "--conversations", "2", "--sessions", "2"), "sqlite")


def test_ingest_bench_reads_a_locomo_file(tmp_path: Path) -> None:
    turns = [{"speaker": "Ana" if i % 2 == 0 else "Bo", "dia_id": f"D1:{i + 1}", "text": f"Line {i}"} for i in range(6)]
    conversation = {"speaker_a": "Ana", "speaker_b": "Bo", "session_1": turns, "session_1_date_time": "8 May, 2023"}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "c1", "conversation": conversation, "qa": []}]))
    data = run_bench("ingest", "--data", str(path))
    assert data["data"] == "locomo.json" and (data["conversations"], data["sessions"], data["turns"]) == (1, 1, 6)
    assert data["exchanges"] == 3


def check_freshness(data: dict[str, object], backend: str) -> None:
    assert list(data) == FRESHNESS_KEYS
    assert data["backend"] == backend and data["samples"] == 3
    assert data["found"] + data["not_saved"] + data["timed_out"] == 3  # type: ignore[operator]
    assert data["timed_out"] == 0
    assert data["limit_search_p50_ms"] > 0  # type: ignore[operator]
    if data["found"]:
        assert 0 < data["p50_ms"] <= data["p95_ms"] <= data["max_ms"]  # type: ignore[operator]


def test_freshness_bench_prints_one_json_line() -> None:
    check_freshness(run_bench("freshness", "--samples", "3", "--users", "2", "--memories", "5"), "sqlite")


@pytest.mark.postgres
def test_postgres_benches_print_one_json_line(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTACK_DATABASE_URL", postgres_url)  # the session's server, not a second one
    check_ingest(run_bench("ingest", "--backend", "postgres", "--conversations", "2", "--sessions", "2"), "postgres")
    args = ("--samples", "3", "--users", "2", "--memories", "5")
    check_freshness(run_bench("freshness", "--backend", "postgres", *args), "postgres")
