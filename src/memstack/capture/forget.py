"""What forgetting a memory hides besides it, and which memories a forget by query means.

A memory is one line about the user, but what the user said lives on elsewhere: in the exchange it was captured
from (``source_turn_ids``; for a chat turn's memory, the exchange said at its ``observed_at``), in other exchanges
that say the same thing ("Can you suggest toys for Miso?"), and in what memstack derived from the conversation:
the session's facts, the turn log's summaries, the session's line in later contexts. A user who says "forget
that" means all of it, so :meth:`Forgetter.hidden_by` lists it, and the store hides it with the memory in one
transaction (:class:`~memstack.store.base.HiddenStore`). Nothing is copied or rewritten: a restore shows exactly
what was hidden, and a permanent delete keeps it hidden for good.

**Which texts say what the memory says** (:class:`Trace`). A memory's key words are its content stems
(:mod:`memstack.text`) without the words a memory frames its fact with ("User", "prefers", "named"…); its names are
the capitalised ones among them ("Miso", "Lisbon"). A text carries the memory when it holds

- every one of its names ("Miso knocked over a plant"),
- one of its names and one more key word ("my sister in Rome" for "User's sister Gina lives in Rome"), or
- two thirds of its key words (at least one): "I'm allergic to peanuts" for "User is allergic to peanuts", and
  for a memory without names the only way.

A city named alone ("a flight to Rome") does not carry "User's sister Gina lives in Rome"; a pet's name does carry
"User adopted a cat named Miso": a name is what a person's text about one thing of their life has in common. Within
a session the memory came from, its facts and its line are held to less: one key word in common (a line "User
talked about their new cat" came from the exchange that adopted Miso). Exchanges are found through the full-text
index (those holding any key word, the newest :data:`MAX_EXCHANGES`), then read against the rule: both messages and
their summaries. Words alone, not vectors: the rule must be one a person can check in the preview, and an exchange
that paraphrases without a key word ("we got a kitten") is hidden only when it is the memory's source.

**Which memories a query means** (:meth:`Forgetter.matching`): those holding every key word of the query (its
content stems without request words: "forget everything about my cat" looks for ``cat``), those as close to the
query as the assistant's forget tool asks (cosine :data:`FORGET_MIN_COSINE`), and then every memory that names one
of their names (the cat is Miso: "Miso is afraid of the vacuum" goes too). The preview (``dry_run``) lists exactly
these and what each hides before anything changes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memstack.embed import Embedder
from memstack.errors import InputError
from memstack.store._hidden import MAX_HIDDEN, parse_turn_ids
from memstack.store.base import Store
from memstack.text import FRAMING_WORDS, GENERIC_TOPIC_WORDS, REQUEST_WORDS, STOP_WORDS, stem, words
from memstack.types import HiddenItem, HiddenKind, Memory, UserRef, check_text

__all__ = ["FORGET_MIN_COSINE", "MAX_EXCHANGES", "MAX_MATCHES", "Forgetter", "Trace", "unique"]

#: A query is about a memory at least this close in meaning (cosine), as for the assistant's forget tool.
FORGET_MIN_COSINE = 0.5

#: Exchanges holding a key word that a forget reads, the newest first.
MAX_EXCHANGES = 1000

#: Memories a forget by query looks at, per way of finding them.
MAX_MATCHES = 200

#: Characters of an exchange's message shown in a preview.
_PREVIEW_CHARS = 200

_WORD = re.compile(r"[^\W_]+")
_FRAMING = frozenset(stem(w) for w in (*FRAMING_WORDS, *GENERIC_TOPIC_WORDS))
_REQUEST = frozenset(stem(w) for w in REQUEST_WORDS)


def _key_words(text: str, skip: frozenset[str] = _FRAMING) -> dict[str, str]:
    """The content words of ``text`` whose stem is not in ``skip``, by stem (one word per stem)."""
    out: dict[str, str] = {}
    for w in words(text):
        if w not in STOP_WORDS and (s := stem(w)) not in skip:
            out.setdefault(s, w)
    return out


def _stems(text: str, *, skip: frozenset[str] = _FRAMING) -> set[str]:
    return set(_key_words(text, skip))


@dataclass(frozen=True, slots=True)
class Trace:
    """What of a memory's text shows that another text says it (module docstring): its key words and its names,
    as stems."""

    keys: frozenset[str]
    names: frozenset[str]

    @classmethod
    def of(cls, text: str) -> Trace:
        keys = frozenset(_stems(text))
        names = set()
        for word in _WORD.findall(text):
            if word[:1].isupper() and word.lower() not in STOP_WORDS:
                s = stem(word)
                if s in keys:
                    names.add(s)
        return cls(keys, frozenset(names))

    def found_in(self, text: str, *, loosely: bool = False) -> bool:
        """Whether ``text`` says what the memory says; ``loosely``: one key word in common is enough (a fact or a
        line of a session the memory came from)."""
        if not self.keys or not text:
            return False
        held = self.keys & _stems(text)
        if loosely and held:
            return True
        if self.names and (self.names <= held or (self.names & held and len(held) >= 2)):
            return True
        return len(held) >= max(1, math.ceil(len(self.keys) * 2 / 3))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _PREVIEW_CHARS else text[: _PREVIEW_CHARS - 1].rstrip() + "…"


class Forgetter:
    """Decides what forgetting a memory hides and which memories a query means; writes nothing (the engine and
    the forget tool pass what it finds to ``store.memories.forget``)."""

    def __init__(self, store: Store, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    async def hidden_by(self, user: UserRef, memory: Memory) -> list[HiddenItem]:
        """What forgetting ``memory`` hides besides it (each item with its ``reason``; exchanges with their user
        message, clipped, as ``text`` for a preview: the store keeps only their session and turn)."""
        trace = Trace.of(memory.content)
        sources = set(parse_turn_ids(memory.source_turn_ids))
        # A chat turn's detection starts before the turn has its number, so its memories name the detection
        # (``job:…``); the message it read is the exchange archived at the time the memory was observed.
        said_at = [memory.observed_at] if memory.observed_at and len(sources) < len(memory.source_turn_ids) else []
        turns = await self.store.hidden.mentions(
            user, sorted(trace.keys), turn_ids=memory.source_turn_ids, said_at=said_at, limit=MAX_EXCHANGES
        )
        sources |= {(t.session_id, t.turn) for t in turns if said_at and t.at == said_at[0]}
        items: list[HiddenItem] = []
        hidden: dict[str, set[int]] = {}
        for t in sorted(turns, key=lambda t: (t.session_id, t.turn)):
            if (t.session_id, t.turn) in sources:
                reason = "source"
            elif any(trace.found_in(x) for x in (t.user, t.assistant, t.user_summary, t.assistant_summary)):
                reason = "mentions"
            else:
                continue
            items.append(HiddenItem(HiddenKind.TURN, t.session_id, t.turn, _clip(t.user), memory.id, reason))
            hidden.setdefault(t.session_id, set()).add(t.turn)
        came_from = {sid for sid, _ in sources}
        for session_id, line, facts in await self.store.hidden.session_texts(user, sorted(hidden)):
            loose = session_id in came_from
            for fact in facts:
                if trace.found_in(fact.text, loosely=loose):
                    items.append(HiddenItem(HiddenKind.FACT, session_id, 0, fact.text, memory.id, "mentions"))
            if line and trace.found_in(line, loosely=loose):
                items.append(HiddenItem(HiddenKind.LINE, session_id, 0, line, memory.id, "mentions"))
        if len(items) > MAX_HIDDEN:  # what one forget may hide: the memory's sources first, then the newest
            items.sort(key=lambda i: (i.reason != "source", i.kind is not HiddenKind.TURN))
            items = items[:MAX_HIDDEN]
        return items

    async def matching(self, user: UserRef, query: str) -> list[Memory]:
        """The user's active memories ``query`` is about (module docstring), newest first."""
        check_text(query, "the forget query")
        asked = _key_words(query, _FRAMING | _REQUEST) or _key_words(query, _REQUEST)
        if not query.strip() or not asked:
            raise InputError("say what to forget: the query needs a word about it, e.g. 'my cat'")
        keys = set(asked)
        found: dict[str, Memory] = {}
        for hit in await self.store.index.search_text(user, " ".join(asked.values()), MAX_MATCHES):
            if keys <= _stems(hit.memory.content, skip=frozenset()):
                found[hit.memory.id] = hit.memory
        vector = (await self.embedder.embed([query]))[0]
        for hit in await self.store.index.nearest(user, vector, MAX_MATCHES):
            if hit.score >= FORGET_MIN_COSINE:
                found.setdefault(hit.memory.id, hit.memory)
        named: dict[str, str] = {}
        for memory in found.values():
            names = Trace.of(memory.content).names
            named.update((n, w) for n, w in _key_words(memory.content).items() if n in names)
        if named:
            for hit in await self.store.index.search_text(user, " ".join(named.values()), MAX_MATCHES):
                if named.keys() & Trace.of(hit.memory.content).names:
                    found.setdefault(hit.memory.id, hit.memory)
        return sorted(found.values(), key=lambda m: (m.created_at, m.id), reverse=True)


def unique(items: Iterable[HiddenItem]) -> list[HiddenItem]:
    """Each hidden thing once (the first memory that hides it), in order."""
    seen: dict[tuple[str, str, int, str], HiddenItem] = {}
    for item in items:
        seen.setdefault(item.key, item)
    return list(seen.values())
