"""The README followed as a new user would: every shell and Python example, in the order the README gives them, in one
fresh directory, with only ``memstack`` on PATH (what ``. .venv/bin/activate`` gives) and no ``MEMSTACK_*``
variables. Each example must run without an error; the examples' own output is checked by the tests next to each
one (``test_readme.py``, ``test_readme_http.py``, ``test_readme_chat.py``, ``test_readme_recall.py``,
``tests/client``).

The few examples that cannot run here are listed in ``SKIPPED`` with the reason; any other block the README adds
is run."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: A block is skipped when it contains one of these; the reason is why it cannot run on a fresh clone here.
SKIPPED = {
    "make run": "the two commands themselves: `make test` runs this test, and `make run` serves until stopped",
    "memstack eval locomo": "needs LoCoMo's data file, which is not shipped with memstack",
    "memstack eval guard": "needs the LoCoMo, STS-B and PAWS files, which are not shipped with memstack",
    "memstack eval answers": "needs an OpenAI API key (a paid model reads and judges the answers)",
    "MEMSTACK_EMBEDDER=openai:": "switches the store to OpenAI's embeddings: needs an OpenAI API key",
}


def blocks() -> list[tuple[str, str]]:
    """``(language, code)`` of every shell and Python block of the README, in order (JSON blocks are data)."""
    found = re.findall(r"^```(\w*)\n(.*?)^```", README.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    return [(lang or "sh", code) for lang, code in found if lang in ("", "sh", "python")]


def _script(port: int) -> tuple[str, list[str]]:
    lines = ["set -euo pipefail", "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT"]
    skipped = []
    for n, (lang, code) in enumerate(blocks()):
        reason = next((why for marker, why in SKIPPED.items() if marker in code), None)
        if reason is not None:
            skipped.append(code.splitlines()[0])
            continue
        code = code.replace("8700", str(port))
        lines.append(f"echo '>>> README block {n} ({lang})'")
        if lang == "python":
            lines.append(f"python3 - <<'README_PYTHON_{n}'\n{code}README_PYTHON_{n}")
        else:
            lines.append(code)
    return "\n".join(lines) + "\n", skipped


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_readme_example_runs_in_order_on_a_fresh_directory(tmp_path: Path) -> None:
    script, skipped = _script(_free_port())
    assert len(skipped) == len(SKIPPED), f"a skip marker matches no block (or several): {skipped}"
    assert len(blocks()) - len(skipped) >= 10
    shutil.copytree(ROOT / "examples", tmp_path / "examples")  # the README's paths are relative to the clone
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTACK_") and k != "OPENAI_API_KEY"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_DATA_HOME"] = str(tmp_path / ".xdg-data")  # the per-user store of this run, not the real one
    (tmp_path / "readme.sh").write_text(script, encoding="utf-8")
    done = subprocess.run(
        ["bash", "readme.sh"], cwd=tmp_path, env=env, input="y\n" * 4, capture_output=True, text=True, timeout=600
    )
    last = done.stdout[-3000:] + "\n--- stderr ---\n" + done.stderr[-3000:]
    assert done.returncode == 0, last
    assert '{"error":' not in done.stdout, last  # curl -s does not fail on an error status: its body would say
    assert "Traceback" not in done.stderr, last
    ran = re.findall(r">>> README block (\d+)", done.stdout)
    assert len(ran) == len(blocks()) - len(skipped), last
