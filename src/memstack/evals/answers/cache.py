"""Model answers kept on disk, so an interrupted evaluation resumes and a repeated one costs nothing.

One JSON line per call in ``answers.jsonl`` under the cache directory, keyed by a SHA-256 of the model string and
the messages sent (which hold the prompt and the question), with the random key of each context data block
(``<context-data … key="…">``, new for every assembly) left out: the same context asked again is the same call.
A line is appended and flushed as soon as its answer arrives; a last line cut short by a kill is ignored when the
file is read again.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstack.errors import InputError
from memstack.models import Message

__all__ = ["AnswerCache", "call_key"]

_BLOCK_KEY = re.compile(r'(<\/?context-data\b[^>]*?) key="\d+"')


def call_key(model: str, messages: Sequence[Message]) -> str:
    """The cache key of one call: the model string and every message's role and content."""
    said = [[m.role, _BLOCK_KEY.sub(r'\1 key=""', m.content or "")] for m in messages]
    body = json.dumps([model, said], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


class AnswerCache:
    """``get``/``put`` of a call's result (a JSON object) by :func:`call_key`; ``hits`` and ``misses`` count."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / "answers.jsonl"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot use {directory} as the answer cache ({exc}); pass another --cache") from None
        self._entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interrupted run
                if isinstance(row, dict) and isinstance(row.get("key"), str) and isinstance(row.get("value"), dict):
                    self._entries[row["key"]] = row["value"]
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: str) -> dict[str, Any] | None:
        value = self._entries.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._entries[key] = value
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n")
            out.flush()
