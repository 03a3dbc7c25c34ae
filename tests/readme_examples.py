"""The examples of the README and of ``docs/*.md`` as a new user runs them (the tests import this from ``tests/``).

A page's examples are its fenced blocks of shell (```` ```sh ````, ```` ```bash ````, or no language) and Python:
the walkthrough (``test_readme_walkthrough.py``) runs every one of them, page by page. A block that cannot run on a
fresh clone (it needs a paid model, data memstack does not ship, a PostgreSQL server, or it serves until stopped) has
the line ``<!-- not run: REASON -->`` right above its fence, so the reason stands in the page beside the example.
Other languages (``text``, ``json``, ``yaml``, ``ini``, ``sql``) are output or configuration, never run.

The tests next to each example check its output: they take it from its page by heading (:func:`python_block`), so
an example moved to another page moves its test's reference with it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: Languages of the blocks that are run (no language counts as shell).
RUN_LANGUAGES = ("", "sh", "bash", "shell", "python")
#: The marker that keeps the next block out of the walkthrough: ``<!-- not run: REASON -->``.
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>.*?) -->")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block of a page: its language, its code, the line of its fence, and why it is not run (``None``:
    it is run, when its language is one of :data:`RUN_LANGUAGES`)."""

    page: Path
    line: int
    lang: str
    code: str
    not_run: str | None

    @property
    def runs(self) -> bool:
        return self.lang in RUN_LANGUAGES and self.not_run is None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README, then every page of ``docs/`` in name order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order, with the not-run marker of the line above it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    n = 0
    while n < len(lines):
        if lines[n].startswith("```"):
            lang = lines[n][3:].strip().split(" ", 1)[0]
            marker = NOT_RUN.fullmatch(lines[n - 1].strip()) if n else None
            end = next((i for i in range(n + 1, len(lines)) if lines[i].startswith("```")), None)
            assert end is not None, f"{page.name}:{n + 1}: a code block is never closed"
            code = "".join(line + "\n" for line in lines[n + 1 : end])
            found.append(Block(page, n + 1, lang, code, marker.group("reason").strip() if marker else None))
            n = end
        n += 1
    return found


def section(heading: str, page: Path = README) -> str:
    """The text under ``## heading`` of ``page``, up to the next ``## `` heading."""
    text = page.read_text(encoding="utf-8")
    assert f"\n## {heading}\n" in text, f"{page.name} has no '## {heading}' section"
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def python_block(heading: str, page: Path = README) -> str:
    """The first python block under ``## heading`` of ``page`` (before the next ``## `` heading)."""
    match = re.search(r"^```python\n(.*?)^```", section(heading, page), re.DOTALL | re.MULTILINE)
    assert match, f"{page.name} has no python block under '## {heading}'"
    return match.group(1)


def data_home(cwd: Path) -> Path:
    """Where a new user's store lands in these runs: the per-user data directory, kept inside the test's own
    directory (``$XDG_DATA_HOME``) so no run touches the real one or sees another's memories."""
    return cwd / ".xdg-data" / "memstack"


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` run by a new interpreter in ``cwd``, with no ``MEMSTACK_*`` variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_")}
    env["XDG_DATA_HOME"] = str(data_home(cwd).parent)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
