"""The recall example of docs/python.md (section "Recall") runs as written, on its own, in a fresh directory."""

from __future__ import annotations

from pathlib import Path

from readme_examples import DOCS, python_block, run_python  # tests/readme_examples.py


def _example() -> str:
    return python_block("Recall", DOCS / "python.md")


def test_the_recall_example_runs(tmp_path: Path) -> None:
    done = run_python(_example(), tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "turn ('trip-2024:1',) 2024-06-02 09:00:00+00:00 We're off to Porto!" in lines
