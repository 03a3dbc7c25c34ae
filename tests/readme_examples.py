"""The README's Python examples as a new user runs them: the first ```python block under a heading, run in a fresh
directory by a new interpreter with no ``MEMSTACK_*`` variables (the tests import this from ``tests/``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_block(heading: str) -> str:
    """The first python block under ``## heading`` (before the next ``## `` heading)."""
    section = README.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"README.md has no python block under '## {heading}'"
    return match.group(1)


def data_home(cwd: Path) -> Path:
    """Where a new user's store lands in these runs: the per-user data directory, kept inside the test's own
    directory (``$XDG_DATA_HOME``) so no run touches the real one or sees another's memories."""
    return cwd / ".xdg-data" / "memstack"


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    env["XDG_DATA_HOME"] = str(data_home(cwd).parent)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
