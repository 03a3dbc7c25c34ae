"""The curl commands of docs/http.md and the OpenAI example of docs/openai.md run as written against a live server
(host and port pointed at the test server)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import Running

DOCS = Path(__file__).resolve().parents[2] / "docs"


def curl_commands() -> list[str]:
    page = (DOCS / "http.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", page, re.DOTALL)
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
    added, found, listed, usage, chat = outputs[:5]
    assert added["content"] == "User is training for the Lisbon marathon" and added["category"] == "goal"
    assert found["results"][0]["memory"]["id"] == added["id"]
    assert added["id"] in [m["id"] for m in listed["memories"]]
    assert usage["display"].endswith("/ 50")
    assert chat["reply"] and chat["session_id"] and chat["context_id"]
    assert any("Porto" in u["content"] for u in chat["memory_updates"])
    imported, recalled, sessions, ended, delegated = outputs[5:10]
    assert imported["turns"] == ["trip:1"] and imported["summary"]["ended"]
    assert any(r["kind"] == "turn" and "Kyoto" in r["text"] for r in recalled["results"])
    assert "trip" in [s["session_id"] for s in sessions["sessions"]]
    assert ended["session_id"] == "trip" and ended["summary"]["line"]
    assert delegated["reply"] and delegated["memory_updates"] == []
    # the add sent with an Idempotency-Key: run again, it is answered from the first, and one memory is stored
    (keyed,) = outputs[10:]
    assert keyed["action"] == "created" and keyed["content"] == "User prefers trail runs to road races"
    host = running.url.removeprefix("http://")
    retry = commands[10].replace("localhost:8700", host) + " -i"
    done = subprocess.run(["bash", "-c", retry], env=env, capture_output=True, text=True, timeout=60)
    assert "idempotent-replayed: true" in done.stdout.lower() and keyed["id"] in done.stdout
    listing = commands[2].replace("localhost:8700", host).replace("goal", "preference")
    listed = subprocess.run(["bash", "-c", listing], env=env, capture_output=True, text=True, timeout=60)
    assert [m["id"] for m in json.loads(listed.stdout)["memories"]].count(keyed["id"]) == 1


def openai_example() -> str:
    page = (DOCS / "openai.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, re.DOTALL) if "from openai import" in b]
    assert blocks, "docs/openai.md has no python block using the openai client"
    return str(blocks[0])


def test_the_readme_openai_example_works(running: Running) -> None:
    code = openai_example().replace("http://localhost:8700", running.url)
    env = {**os.environ, "MEMSTACK_KEY": running.key_a}  # as the page's shell example exports it
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    reply, updates = done.stdout.strip().split("\n", 1)[0], done.stdout.strip().splitlines()[-1]
    assert reply  # offline here: the labelled offline responder's answer
    assert "vegetarian" in updates.lower()
