"""The README's chat example runs exactly as written, offline (SQLite, local MiniLM, rules, offline responder)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def chat_example() -> str:
    section = README.read_text(encoding="utf-8").split("\n## Chat\n", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, "README.md has no python block under '## Chat'"
    return match.group(1)


def test_the_chat_example_runs_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    done = subprocess.run(
        [sys.executable, "-c", chat_example()], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Memory updated: ['User is vegetarian.']\n[offline] No chat model is configured")
    assert 'Your message: "What should I cook tonight?"' in out
    assert "time zone Europe/Lisbon" in out and "- (preference) User is vegetarian." in out
