"""The README's Python example, and the examples of docs/python.md and docs/privacy.md it leads to, run exactly as
written (offline: SQLite + the local MiniLM embedder)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from readme_examples import DOCS, data_home, python_block, run_python  # tests/readme_examples.py


def python_example() -> str:
    return python_block("Python")


def test_the_example_is_short() -> None:
    assert len(python_example().strip().splitlines()) <= 10


def test_the_readme_example_runs_as_written(tmp_path: Path) -> None:
    done = run_python(python_example(), tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("Any food I should avoid? -> I'm vegetarian and allergic to peanuts (")
    assert lines[1].startswith("How should I prepare for my race? -> I'm training for the Lisbon marathon in May (")
    assert (data_home(tmp_path) / "memstack.db").exists() and not (tmp_path / ".memstack").exists()


def test_running_the_example_twice_leaves_the_memories_of_one_run(tmp_path: Path) -> None:
    """Explicit adds are idempotent (issue 13): the second run finds each memory already held and stores nothing."""
    outputs = []
    for _ in range(2):
        done = run_python(python_example(), tmp_path)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    with sqlite3.connect(data_home(tmp_path) / "memstack.db") as db:
        rows = db.execute("SELECT content FROM memories WHERE user_id = 'alice' AND is_active").fetchall()
    assert sorted(r[0] for r in rows) == [
        "I'm training for the Lisbon marathon in May",
        "I'm vegetarian and allergic to peanuts",
        "My biology exam is on Friday at 9am",
    ]


def test_the_forgetting_example_prints_what_it_says(tmp_path: Path) -> None:
    """Issue 23: the preview lists the memories and what mentions them; afterwards recall finds none of it."""
    done = run_python(python_block("Forgetting", DOCS / "privacy.md"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['Miso is afraid of the vacuum', 'User has a cat named Miso']",
        "[('line', 'pets', 0), ('turn', 'pets', 1)]",
        "[]",
    ]


def test_the_vocabulary_example_prints_what_it_says(tmp_path: Path) -> None:
    """user_id, limit, metadata and min_score as docs/python.md shows them: no deprecation warning, the filter and the
    threshold keep the one memory about indentation."""
    strict = "import warnings\nwarnings.filterwarnings('error', '.* is deprecated: use', DeprecationWarning)\n"
    done = run_python(strict + python_block("One vocabulary", DOCS / "python.md"), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['Prefers tabs over spaces']",
        "[('Prefers tabs over spaces', {'project': 'apollo'})]",
    ]
