"""``memstack eval temporal``: the generated suite is the same for the same seed, asks what it says it asks, and the
command prints its contract; the stale-fact rate is zero where superseding keeps intervals and not where every
version stays current (the add-only store)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from memstack.cli import main
from memstack.evals.temporal_data import ATTRIBUTES, generate


def test_the_suite_is_deterministic_and_asks_about_every_kind() -> None:
    users, questions = generate(40, 7)
    assert (users, questions) == generate(40, 7) and generate(40, 8)[1] != questions
    assert len(questions) >= 500
    assert set(Counter(q.kind for q in questions)) == {"current", "as_of", "before", "after"}
    for user in users:
        for attr in ATTRIBUTES:
            timeline = [v for v in user.versions if v.attribute == attr.name]
            assert 2 <= len(timeline) <= 4 and timeline[-1].end is None
            for older, newer in itertools.pairwise(timeline):
                assert older.end == newer.start  # one version ends where the next begins
        contents = [v.content for v in user.versions] + list(user.distractors)
        assert len(contents) == len(set(contents))
    for q in questions:
        if q.kind == "as_of":
            assert q.as_of is not None
            [held] = [v for u in users if u.id == q.user for v in u.versions if v.content == q.expected]
            assert held.end is not None and q.as_of < held.end and (held.start is None or held.start < q.as_of)


def test_eval_temporal_prints_the_contract(tmp_path: Path) -> None:
    env = {"MEMSTACK_HOME": str(tmp_path / "home")}
    result = CliRunner().invoke(
        main, ["eval", "temporal", "--users", "3", "--embedder", "hash:64", "--json", "--no-progress"], env=env
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.strip().splitlines()[-1])
    assert set(summary) >= {"questions", "current_top1", "as_of_top1", "ordering_top1", "stale_rate", "add_only"}
    assert summary["questions"] == len(generate(3, 7)[1]) and summary["stale_rate"] == 0.0
    assert summary["add_only"]["stale_rate"] > 0  # every version current: older ones outrank the newest
