"""``memstack reembed`` as a user runs it: the JSON contract on both backends, the summary, refusing normal use
half-way, and resuming after the process is killed with SIGKILL in the middle of a run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memstack.cli import main
from memstack.embed import get_embedder
from memstack.store.base import Store
from memstack.types import NewMemory, UserRef
from memstack_testing.openai_server import Reply, ScriptedOpenAIServer

OLD = get_embedder("hash:384")
ALICE = UserRef("alice")
KEYS = ["embedder", "dim", "from_embedder", "from_dim", "vectors", "batches", "seconds"]


def _fill(backend: str, home: Path, url: str | None, n: int) -> None:
    """A store with ``n`` memories of alice embedded with ``hash:384``, the first one forgotten."""

    async def fill() -> None:
        store: Store
        if backend == "postgres":
            from memstack.store.postgres import PostgresStore

            assert url is not None
            store = await PostgresStore.open(url, dim=OLD.dim, embedder=OLD.name)
        else:
            from memstack.store.sqlite import SQLiteStore

            store = await SQLiteStore.open(home / "memstack.db", dim=OLD.dim, embedder=OLD.name)
        texts = [f"alice remembers item {i}" for i in range(n)]
        added = await store.memories.add_many(ALICE, [NewMemory(t) for t in texts], await OLD.embed(texts))
        await store.memories.forget(ALICE, added[0].id, by="ai")
        await store.close()

    asyncio.run(fill())


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_reembed_prints_a_summary_and_the_json_contract_then_does_nothing_twice(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    _fill(backend, tmp_path, url, 30)
    env = {"MEMSTACK_HOME": str(tmp_path), "MEMSTACK_EMBEDDER": "hash:384", "MEMSTACK_DATABASE_URL": url or ""}
    runner = CliRunner()
    args = ["reembed", "--to", "hash:256", "--batch", "8", "--json", "--no-progress"]
    out = runner.invoke(main, args, env=env, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    lines = out.stdout.strip().splitlines()
    result = json.loads(lines[-1])
    assert list(result) == KEYS
    assert {k: result[k] for k in KEYS[:-1]} == {
        "embedder": "hash:256",
        "dim": 256,
        "from_embedder": "hash:384",
        "from_dim": 384,
        "vectors": 30,  # the forgotten memory too
        "batches": 4,
    }
    assert isinstance(result["seconds"], float) and result["seconds"] >= 0
    text = "\n".join(lines[:-1])
    assert "re-embedded 30 vectors in 4 batches" in text
    assert "dedup: no calibrated parameters for hash:256" in text  # the threshold follows the model
    assert "set MEMSTACK_EMBEDDER=hash:256" in text

    refused = runner.invoke(main, ["memories", "list", "--user", "alice"], env=env)
    assert refused.exit_code == 1 and "hash:256" in refused.output and "memstack reembed" in refused.output
    listed = runner.invoke(main, ["memories", "list", "--user", "alice"], env={**env, "MEMSTACK_EMBEDDER": "hash:256"})
    assert listed.exit_code == 0 and "alice remembers item 7" in listed.output

    again = runner.invoke(main, args, env=env, catch_exceptions=False)
    assert again.exit_code == 0
    assert "already uses 'hash:256'" in again.stdout
    assert json.loads(again.stdout.strip().splitlines()[-1])["vectors"] == 0


def test_reembed_is_refused_without_a_database(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["reembed", "--to", "hash:256"], env={"MEMSTACK_HOME": str(tmp_path / "none")})
    assert out.exit_code == 1 and "there is no memstack database" in out.output


def _staged(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM reembed_vectors").fetchone()[0])


def _run_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    code = "from memstack.cli import main; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_run_killed_with_sigkill_resumes_where_it_stopped(tmp_path: Path) -> None:
    """A remote OpenAI-compatible embedder (the scripted server) answers three batches, then hangs on the fourth;
    the process is killed there. The store refuses normal use; the next run embeds only what was left."""
    _fill("sqlite", tmp_path, None, 40)
    db = tmp_path / "memstack.db"
    target = "openai:text-embedding-3-small@32"
    with ScriptedOpenAIServer() as server:
        env = {
            "MEMSTACK_HOME": str(tmp_path),
            "MEMSTACK_EMBEDDER": target,
            "MEMSTACK_OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
        }
        server.script_embeddings(*[Reply.text("answer")] * 3, Reply.text("hang").after(60))
        proc = _run_cli(["reembed", "--batch", "5", "--no-progress"], env)
        try:
            deadline = time.monotonic() + 60
            while (len(server.embedding_requests) < 4 or _staged(db) < 15) and time.monotonic() < deadline:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.05)
            assert _staged(db) == 15 and len(server.embedding_requests) == 4
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()

        refused = CliRunner().invoke(main, ["memories", "list", "--user", "alice"], env=env)
        assert refused.exit_code == 1
        assert f"a reembed of {db} to '{target}' (32-d) is in progress: run `memstack reembed`" in refused.output

        server.reset()
        proc = _run_cli(["reembed", "--batch", "5", "--json", "--no-progress"], env)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        result = json.loads(stdout.strip().splitlines()[-1])
        assert {k: result[k] for k in KEYS[:-1]} == {
            "embedder": target,
            "dim": 32,
            "from_embedder": "hash:384",
            "from_dim": 384,
            "vectors": 25,
            "batches": 5,
        }
        assert "15 vectors staged by an interrupted run were kept" in stdout
        embedded = [text for r in server.embedding_requests for text in r._get("input")]
        assert len(embedded) == 25 and "alice remembers item 0" not in embedded  # the staged 15 were not sent again
    listed = CliRunner().invoke(main, ["memories", "list", "--user", "alice"], env=env)
    assert listed.exit_code == 0 and "alice remembers item 39" in listed.output
