"""LoCoMo files as every eval and benchmark reads them: one reader, one rendering of a turn.

A LoCoMo file (snap-research/LoCoMo, CC BY-NC 4.0: pass its path with ``--data``, never ship it) is a list of
conversations. Each has ``conversation`` (``speaker_a``, ``speaker_b``, and per session ``session_N``, a list of
turns ``{speaker, dia_id, text[, img_url, blip_caption]}``, and ``session_N_date_time`` such as "1:56 pm on 8 May,
2023"), ``qa`` (``{question, answer | adversarial_answer, evidence: [dia_id…], category}``) and ``observation``
(``session_N_observation``: per speaker, ``[fact, dia_id or [dia_id…]]`` pairs).

What the reader decides once for everyone:

* Turn ids are ``D<session>:<turn>``: LoCoMo's malformed ones (``D8:6; D9:17``, ``D:11:26``, ``D30:05``) are
  normalised by :func:`dia_ids`, and a turn without one is numbered by its place in the session.
* A shared photo is its caption: :attr:`LocomoTurn.content` is the text followed by ``[shares a photo: caption]``,
  what an import, a classifier or a summarizer is given (the image itself, ``img_url``, is not text to read).
* Session dates are naive datetimes (LoCoMo gives no time zone), read with :data:`memstack.dates.MONTHS`.
* Questions and observations keep their evidence as normalised ids; which of them an eval uses is the eval's choice.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memstack.dates import MONTHS
from memstack.errors import InputError

__all__ = [
    "Conversation",
    "LocomoQuestion",
    "LocomoTurn",
    "Observation",
    "dia_ids",
    "parse_session_date",
    "read_locomo",
]

_DIA = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"^session_(\d+)$")
_OBSERVATIONS = re.compile(r"^session_(\d+)_observation$")
_SESSION_DATE = re.compile(
    r"(?:(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+)?(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    id: str  # D<session>:<turn>
    speaker: str
    text: str
    session: int
    at: datetime  # the session's date
    caption: str | None = None  # the shared photo's caption

    @property
    def content(self) -> str:
        """What the turn says, a shared photo as its caption."""
        return f"{self.text} [shares a photo: {self.caption}]" if self.caption else self.text

    def render(self) -> str:
        """``Speaker: content``, one line of a transcript."""
        return f"{self.speaker}: {self.content}"


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    """``answer``: the gold answer (empty for the adversarial category 5, whose questions the conversation does not
    answer; ``trap`` is the wrong answer LoCoMo wrote for them). ``category``: LoCoMo's numbering, 1 multi-hop,
    2 temporal, 3 open-domain, 4 single-hop, 5 adversarial."""

    text: str
    evidence: tuple[str, ...]
    category: int
    answer: str = ""
    trap: str = ""


@dataclass(frozen=True, slots=True)
class Observation:
    """A short third-person fact LoCoMo wrote about a speaker in a session, with the turns it came from."""

    text: str
    speaker: str
    session: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    """``user_speaker``: LoCoMo's ``speaker_a``, imported as the user; ``other_speaker`` (``speaker_b``) is the
    assistant side of the exchanges."""

    id: str
    turns: tuple[LocomoTurn, ...]
    questions: tuple[LocomoQuestion, ...]
    user_speaker: str = ""
    other_speaker: str = ""
    observations: tuple[Observation, ...] = ()

    @property
    def sessions(self) -> list[list[LocomoTurn]]:
        out: dict[int, list[LocomoTurn]] = {}
        for turn in self.turns:
            out.setdefault(turn.session, []).append(turn)
        return [out[n] for n in sorted(out)]

    @property
    def asked_at(self) -> datetime:
        """Questions are asked the day after the last session."""
        return max(t.at for t in self.turns) + timedelta(days=1)


def dia_ids(raw: object) -> list[str]:
    """``"D8:6; D9:17"`` → ``["D8:6", "D9:17"]``, ``"D:11:26"`` → ``["D11:26"]``, ``"D30:05"`` → ``["D30:5"]``, a
    list of ids → its ids; anything without a session and a turn number is dropped."""
    items = raw if isinstance(raw, list | tuple) else [raw]
    return [f"D{int(s)}:{int(t)}" for item in items for s, t in _DIA.findall(str(item))]


def parse_session_date(raw: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` (or ``"8 May, 2023"``) → a naive datetime."""
    m = _SESSION_DATE.fullmatch(raw.strip())
    month = MONTHS.get((m.group(5) if m else "").lower())
    if m is None or month is None:
        raise InputError(f"unreadable LoCoMo session date {raw!r}; expected e.g. '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, _, year = m.groups()
    h = int(hour or 0) % 12 + (12 if (half or "").lower() == "p" else 0)
    try:
        return datetime(int(year), month, int(day), h, int(minute or 0))
    except ValueError:
        raise InputError(f"LoCoMo session date {raw!r} is not a date") from None


def read_locomo(path: Path) -> list[Conversation]:
    """Every conversation of a LoCoMo JSON file, in order; a missing, malformed or foreign file raises
    :class:`~memstack.errors.InputError` saying what to pass."""
    from memstack.files import read_text

    text = read_text(path, "LoCoMo file", hint="pass the path of locomo10.json or a subset with --data")
    try:
        samples = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not JSON ({exc}); pass a LoCoMo file with --data") from None
    if not isinstance(samples, list):
        raise InputError(f"{path} holds {type(samples).__name__}; a LoCoMo file is a list of conversations")
    out = []
    for number, sample in enumerate(samples, start=1):
        try:
            out.append(_conversation(sample, number))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise InputError(f"conversation {number} of {path} lacks {exc}; is this a LoCoMo file?") from None
    return out


def _conversation(sample: dict[str, Any], number: int) -> Conversation:
    conv = sample["conversation"]
    turns: list[LocomoTurn] = []
    for session in sorted(int(m.group(1)) for key in conv if (m := _SESSION.match(key))):
        if not isinstance(conv[f"session_{session}"], list):
            continue
        at = parse_session_date(str(conv[f"session_{session}_date_time"]))
        for position, turn in enumerate(conv[f"session_{session}"], start=1):
            ids = dia_ids(turn.get("dia_id", ""))
            turn_id = ids[0] if ids else f"D{session}:{position}"
            caption = str(turn.get("blip_caption") or "") or None
            turns.append(LocomoTurn(turn_id, str(turn["speaker"]), str(turn["text"]), session, at, caption))
    questions = []
    for qa in sample.get("qa", []):
        evidence = tuple(dict.fromkeys(e for raw in qa.get("evidence", []) for e in dia_ids(raw)))
        answer, trap = str(qa.get("answer", "")), str(qa.get("adversarial_answer", ""))
        questions.append(LocomoQuestion(str(qa["question"]), evidence, int(qa["category"]), answer, trap))
    observations = []
    for key, per_speaker in (sample.get("observation") or {}).items():
        session = int(m.group(1)) if (m := _OBSERVATIONS.match(key)) else 0
        for speaker, facts in (per_speaker or {}).items():
            for fact in facts:
                if isinstance(fact[0], str) and fact[0].strip():
                    evidence = tuple(dia_ids(fact[1])) if len(fact) > 1 else ()
                    observations.append(Observation(fact[0].strip(), str(speaker), session, evidence))
    return Conversation(
        id=str(sample.get("sample_id", f"conv-{number}")),
        turns=tuple(turns),
        questions=tuple(questions),
        user_speaker=str(conv.get("speaker_a") or (turns[0].speaker if turns else "")),
        other_speaker=str(conv.get("speaker_b") or ""),
        observations=tuple(observations),
    )
