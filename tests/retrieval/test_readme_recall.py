"""The README's recall example (section "Quality") runs as written on a fresh store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memstack import Memstack

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    section = README.read_text(encoding="utf-8").split("\n## Quality\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README.md has no python block under '## Quality'"
    return match.group(1)


def test_the_recall_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Memstack(home=tmp_path, embedder="hash:64") as ms:
        exec(_example(), {"ms": ms})  # the README's own code
    lines = capsys.readouterr().out.splitlines()
    assert "turn ('trip-2024:1',) 2024-06-02 09:00:00+00:00 We're off to Porto!" in lines
