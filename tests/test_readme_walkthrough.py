"""The README and every page of ``docs/`` followed as a new user would: each page's shell and Python examples, in the
order the page gives them, in a fresh directory of its own, with only ``memstack`` on PATH (what
``. .venv/bin/activate`` gives) and no ``MEMSTACK_*`` variables. Each example must run without an error; the
examples' own output is checked by the tests next to each one (``test_readme.py``, ``server/test_readme_http.py``,
``engine/test_readme_chat.py``, ``retrieval/test_readme_recall.py``, ``client/test_client.py``, ``test_mcp.py``).

A block that cannot run here says why in its page, on the line above it (``<!-- not run: REASON -->``, see
``readme_examples.py``); any other shell or Python block a page adds is run."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from readme_examples import NOT_RUN, ROOT, RUN_LANGUAGES, Block, blocks, pages  # tests/readme_examples.py

#: The ports the pages use: the HTTP server's and MCP's over HTTP, each replaced by a free one in a run.
PORTS = ("8700", "8701")


def _script(page_blocks: list[Block], ports: dict[str, int]) -> str:
    lines = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT"]
    for n, block in enumerate(page_blocks):
        if not block.runs:
            continue
        code = block.code
        for port, free in ports.items():
            code = code.replace(port, str(free))
        lines.append(f"echo '>>> block {n} ({block.where})'")
        if block.lang == "python":
            lines.append(f"python3 - <<'EXAMPLE_PYTHON_{n}'\n{code}EXAMPLE_PYTHON_{n}")
        else:
            lines.append(code)
    return "\n".join(lines) + "\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _with_examples() -> list[Path]:
    return [page for page in pages() if any(block.runs for block in blocks(page))]


def test_every_not_run_marker_stands_above_an_example_and_says_why() -> None:
    wrong = []
    for page in pages():
        lines = page.read_text(encoding="utf-8").splitlines()
        marked = {block.line - 1 for block in blocks(page) if block.not_run is not None}
        for n, line in enumerate(lines, start=1):
            match = NOT_RUN.search(line)
            if match and n not in marked:
                wrong.append(f"{page.name}:{n}: a not-run marker must be the line right above a code block's fence")
            elif match and len(match.group("reason").split()) < 3:
                wrong.append(f"{page.name}:{n}: say why the block cannot run (a few words at least)")
        for block in blocks(page):
            if block.not_run is not None and block.lang not in RUN_LANGUAGES:
                wrong.append(f"{block.where}: a {block.lang} block is never run; it needs no marker")
    assert not wrong, "\n".join(wrong)


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
    return {_slug(heading) for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_link_between_the_pages_resolves() -> None:
    """A link of the README, the changelog or a docs page names a file that exists, and a heading it has."""
    wrong = []
    for page in [*pages(), ROOT / "CHANGELOG.md"]:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                wrong.append(f"{page.name}: {target} names no file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                wrong.append(f"{page.name}: {target} names no heading of {dest.name}")
    assert not wrong, "\n".join(wrong)


def test_the_readme_and_the_docs_have_examples() -> None:
    ran = {page.name for page in _with_examples()}
    assert {"README.md", "quickstart.md", "python.md", "http.md", "openai.md", "privacy.md"} <= ran


@pytest.mark.parametrize("page", _with_examples(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_example_of_the_page_runs_in_order_on_a_fresh_directory(page: Path, tmp_path: Path) -> None:
    page_blocks = blocks(page)
    script = _script(page_blocks, {port: _free_port() for port in PORTS})
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the pages' paths are relative to the clone
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_") and k != "OPENAI_API_KEY"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_DATA_HOME"] = str(tmp_path / ".xdg-data")  # the per-user store of this run, not the real one
    (tmp_path / "examples.sh").write_text(script, encoding="utf-8")
    done = subprocess.run(
        ["bash", "examples.sh"], cwd=tmp_path, env=env, input="y\n" * 4, capture_output=True, text=True, timeout=600
    )
    last = done.stdout[-3000:] + "\n--- stderr ---\n" + done.stderr[-3000:]
    assert done.returncode == 0, last
    assert '{"error":' not in done.stdout, last  # curl -s does not fail on an error status: its body would say
    assert "Traceback" not in done.stderr, last
    ran = re.findall(r">>> block \d+ ", done.stdout)
    assert len(ran) == sum(block.runs for block in page_blocks), last
