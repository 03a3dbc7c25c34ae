"""The README's recall example (section "Quality") runs as written, on its own, in a fresh directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    section = README.read_text(encoding="utf-8").split("\n## Quality\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README.md has no python block under '## Quality'"
    return match.group(1)


def test_the_recall_example_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    done = subprocess.run(
        [sys.executable, "-c", _example()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "turn ('trip-2024:1',) 2024-06-02 09:00:00+00:00 We're off to Porto!" in lines
