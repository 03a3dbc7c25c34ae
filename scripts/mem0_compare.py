"""One script of mem0 calls, run on mem0 itself and on memstack's drop-in, printing what each returns.

    python scripts/mem0_compare.py memstack          # memstack.compat.mem0.Memory, embedded, hash:64 embedder
    python scripts/mem0_compare.py mem0              # mem0's Memory (pip install mem0ai), offline: see below

mem0 runs offline with ``infer=False`` (no LLM call), its local Qdrant and a hashing embedder put in the place of its
``huggingface`` provider (the real one downloads a model). Ids become ``<id1>``…, times ``<time>`` and scores are
rounded, so the two outputs can be compared with ``diff``; ``docs/adapters-mem0.md`` records them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from typing import Any

DIM = 64


def mem0_memory(home: str) -> Any:
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("OPENAI_API_KEY", "unused: infer=False makes no model call")
    from mem0 import Memory  # type: ignore[import-not-found]
    from mem0.utils.factory import EmbedderFactory  # type: ignore[import-not-found]

    EmbedderFactory.provider_to_class["huggingface"] = f"{__name__}.HashEmbedding"
    return Memory.from_config(
        {
            "embedder": {"provider": "huggingface", "config": {"embedding_dims": DIM}},
            "vector_store": {"provider": "qdrant", "config": {"path": f"{home}/qdrant", "embedding_model_dims": DIM}},
            "history_db_path": f"{home}/history.db",
        }
    )


class HashEmbedding:
    """Words hashed into ``DIM`` buckets, normalised (mem0's embedder interface: ``embed(text, action)``)."""

    def __init__(self, config: Any = None) -> None:
        self.config = config

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        v = [0.0] * DIM
        for w in re.findall(r"\w+", text.lower()):
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
        n = sum(x * x for x in v) ** 0.5 or 1.0
        return [x / n for x in v]


def memstack_memory(home: str) -> Any:
    from memstack.compat.mem0 import Memory

    return Memory(home=home, embedder="hash:64")


class Normal:
    """Ids as ``<id1>``… in order of appearance, times as ``<time>``, scores to 2 places."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def __call__(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v, key) for v in value]
        if key in ("id", "memory_id") and isinstance(value, str):
            return self.ids.setdefault(value, f"<id{len(self.ids) + 1}>")
        if key in ("created_at", "updated_at") and value is not None:
            return "<time>"
        if key == "score" and isinstance(value, float):
            return round(value, 2)
        return value


def scenario(m: Any, show: Any) -> None:
    added = m.add(
        [
            {"role": "user", "content": "I love green tea"},
            {"role": "assistant", "content": "Noted, green tea it is"},
            {"role": "system", "content": "ignored"},
        ],
        user_id="alice", metadata={"topic": "drinks"}, infer=False,
    )  # fmt: skip
    show("add infer=False", added)
    first = added["results"][0]["id"]
    show("add a string", m.add("I live in Lisbon", user_id="alice", agent_id="travel", infer=False))
    show("add for bob", m.add("I am vegetarian", user_id="bob", infer=False))
    show("search", m.search("green tea", filters={"user_id": "alice"}, top_k=2))
    show("search with a metadata filter", m.search("tea", filters={"user_id": "alice", "topic": "drinks"}))
    show("search agent scope", m.search("Lisbon", filters={"user_id": "alice", "agent_id": "travel"}))
    show("get", m.get(first))
    show("get unknown", m.get("00000000-0000-0000-0000-000000000000"))
    show("get_all", m.get_all(filters={"user_id": "alice"}))
    show("update", m.update(first, "I love black tea"))
    show("update metadata", m.update(first, metadata={"mood": "good"}))
    show("get after update", m.get(first))
    show("history", m.history(first))
    show("delete", m.delete(first))
    show("get after delete", m.get(first))
    show("history after delete", m.history(first))
    show("delete_all", m.delete_all(user_id="alice"))
    show("get_all after delete_all", m.get_all(filters={"user_id": "alice"}))
    show("bob untouched", m.get_all(filters={"user_id": "bob"}))


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "memstack"
    home = tempfile.mkdtemp(prefix=f"mem0-compare-{which}-")
    m = mem0_memory(home) if which == "mem0" else memstack_memory(home)
    normal = Normal()

    def show(title: str, value: Any) -> None:
        print(f"## {title}\n{json.dumps(normal(value), indent=1, sort_keys=True)}")

    try:
        scenario(m, show)
    finally:
        m.close()


if __name__ == "__main__":
    main()
