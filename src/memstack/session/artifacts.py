"""The artifacts of a turn (seed 04 §8, "precise backward reference"): code blocks and long drafts, verbatim.

Code blocks come from both messages (fenced, or three or more consecutive code-looking lines); a draft is an
assistant reply whose prose alone reaches ``long_words`` words (an email, an essay, a plan). Each is labelled so a
listing reads well: the first name a code block defines (or its first line), a draft's first words.
"""

from __future__ import annotations

import re

from memstack.session.settings import SessionSettings
from memstack.session.text import cap_words, count_words, split_code, split_sentences
from memstack.types import Artifact, Exchange

__all__ = ["extract_artifacts"]

_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class|function|fn|func|interface|struct|type)\s+([A-Za-z_]\w*)", re.M)
_MIN_CODE_LINES = 2


def _code_label(code: str) -> str:
    names = list(dict.fromkeys(_DEFINES.findall(code)))
    if names:
        return ", ".join(names[:3])
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    return first[:60]


def extract_artifacts(exchange: Exchange, settings: SessionSettings | None = None) -> list[Artifact]:
    s = settings or SessionSettings()
    out: list[Artifact] = []
    for role, text in (("user", exchange.user), ("assistant", exchange.assistant)):
        prose, blocks, _ = split_code(text)
        for block in blocks:
            if len([ln for ln in block.code.splitlines() if ln.strip()]) < _MIN_CODE_LINES and role == "user":
                continue
            out.append(
                Artifact(
                    exchange.turn,
                    "code",
                    block.code,
                    role=role,
                    language=block.language,
                    label=_code_label(block.code),
                    index=len(out),
                )
            )
        if role == "assistant" and count_words(prose) >= s.long_words:
            first = next(iter(split_sentences(prose)), prose)
            out.append(Artifact(exchange.turn, "draft", prose, role=role, label=cap_words(first, 12), index=len(out)))
    return out
