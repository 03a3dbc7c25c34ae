"""The README's curl commands run as written against a live server (host and port pointed at the test server)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from .conftest import Running

README = Path(__file__).resolve().parents[2] / "README.md"


def curl_commands() -> list[str]:
    section = README.read_text(encoding="utf-8").split("\n## HTTP API\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    text = "\n".join(blocks).replace("\\\n", " ")
    return [line.strip() for line in text.splitlines() if line.strip().startswith("curl ")]


def test_the_readme_curl_commands_work(running: Running) -> None:
    commands = curl_commands()
    assert len(commands) >= 4
    env = {**os.environ, "MEMSTACK_KEY": running.key_a}
    outputs = []
    for command in commands:
        pointed = command.replace("localhost:8700", running.url.removeprefix("http://"))
        done = subprocess.run(["bash", "-c", pointed + " -f"], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        outputs.append(json.loads(done.stdout))
    added, found, listed, usage = outputs[:4]
    assert added["content"] == "User is training for the Lisbon marathon" and added["category"] == "goal"
    assert found["results"][0]["memory"]["id"] == added["id"]
    assert added["id"] in [m["id"] for m in listed["memories"]]
    assert usage["display"].endswith("/ 50")
