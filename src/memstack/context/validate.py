"""Keeping lower layers from taking authority: :func:`validate_no_override`, the structural defence and the content
guard's verdicts applied to each layer (DESIGN §2).

* **structure** — every fragment sits in its own layer's section, in layer order; layers 1-2 equal the agent's
  fingerprinted core and characteristics (anything else raises :class:`~memstack.errors.OverrideViolation`); text of
  layers 3-9 is rendered inside data blocks whose delimiters it cannot forge (``render.escape_data``); the session
  layer's own lines (written by memstack from validated values) are data too, and only the client's words in it are
  scanned (``LayerSpec.trusted_sources``).
* **content** — what :class:`~memstack.guard.ContentGuard` flags in layers 3-9 is neutralized (kept inside its data
  block, marked) or quarantined (left out of the prompt) as its layer's entry in the stack says; the flags and how
  they are found are :mod:`memstack.guard`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

from memstack.context.agent import Agent
from memstack.context.render import render_characteristics, render_core
from memstack.context.stack import DEFAULT_STACK, LayerSpec, LayerStack, OnFlag
from memstack.errors import OverrideViolation
from memstack.guard import LOW_CONFIDENCE, RULES, ContentGuard, outside_flags
from memstack.types import Fragment, FragmentStatus, Layer

__all__ = ["check_structure", "content_verdict", "content_verdicts", "validate_no_override", "verdict_reason"]


class Placed(Protocol):
    """What the structural check reads from a fragment (``Fragment`` and the assembler's working records)."""

    @property
    def label(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def text(self) -> str: ...


@lru_cache(maxsize=64)
def authority_text(agent: Agent) -> dict[str, tuple[str, str]]:
    """Source and text of layers 1-2 as the agent defines them."""
    return {
        Layer.CORE.label: (f"agent:{agent.name}#core", render_core(agent)),
        Layer.CHARACTERISTICS.label: (f"agent:{agent.name}#characteristics", render_characteristics(agent)),
    }


def check_structure(items: Sequence[Placed], agent: Agent, stack: LayerStack) -> list[LayerSpec]:
    """The structural half of :func:`validate_no_override`; returns each item's layer entry."""
    agent.verify()
    expected = authority_text(agent)
    specs: list[LayerSpec] = []
    last = 0
    for item in items:
        label = item.label
        entry = stack.entry(label)
        if entry is None:
            raise OverrideViolation(f"fragment {item.source!r} names layer {label!r}, which is not in the stack")
        position, spec = entry
        if position < last:
            raise OverrideViolation(
                f"fragment {item.source!r} of layer {label!r} comes after a lower layer; layers are assembled "
                "in stack order only"
            )
        last = position
        if not item.source.startswith(spec.source_prefix):
            raise OverrideViolation(
                f"fragment {item.source!r} claims layer {label!r}, whose sources start with {spec.source_prefix!r}"
            )
        if position <= 2 and label in expected and (item.source, item.text) != expected[label]:
            raise OverrideViolation(
                f"layer {label!r} differs from agent {agent.name!r} as loaded (fingerprint {agent.fingerprint[:12]}); "
                "layers 1-2 come only from the agent definition"
            )
        specs.append(spec)
    return specs


Verdict = tuple[tuple[str, ...], str] | None


def content_verdict(
    spec: LayerSpec, text: str, role: str | None, source: str, *, guard: ContentGuard | None = None
) -> Verdict:
    """The content half of :func:`validate_no_override` for one fragment: ``None`` when it may pass as it is, else
    its flags and what to do (``"quarantine"`` or ``"neutralize"``)."""
    return content_verdicts([(spec, text, role, source)], guard=guard)[0]


def content_verdicts(
    items: Sequence[tuple[LayerSpec, str, str | None, str]], *, guard: ContentGuard | None = None
) -> list[Verdict]:
    """:func:`content_verdict` for every ``(spec, text, role, source)`` of one assembly, in one call to the guard."""
    checked = [
        i
        for i, (spec, _, role, source) in enumerate(items)
        if spec.on_flag is not OnFlag.TRUSTED and role not in spec.trusted_roles and source not in spec.trusted_sources
    ]
    found = (guard or RULES).scan_many([(items[i][1], items[i][3] == "delegated:instructions") for i in checked])
    out: list[Verdict] = [None] * len(items)
    for i, flags in zip(checked, found, strict=True):
        if not flags and _from_outside(items[i][2], items[i][3]):
            flags = outside_flags(items[i][1])
        if flags == LOW_CONFIDENCE:
            out[i] = (flags, OnFlag.NEUTRALIZE.value)
        elif flags:
            out[i] = (flags, items[i][0].on_flag.value)
    return out


def _from_outside(role: str | None, source: str) -> bool:
    """Text that cannot be the user's words: tool output, a delegated task's payload or output schema."""
    return role == "tool" or (source.startswith("delegated:") and source != "delegated:instructions")


def verdict_reason(found: tuple[str, ...], action: str) -> str:
    if action == OnFlag.QUARANTINE.value:
        return f"quarantined: tries to take authority ({', '.join(found)})"
    return f"neutralized: kept inside its data block marked flagged ({', '.join(found)})"


def validate_no_override(
    fragments: Sequence[Fragment],
    agent: Agent,
    *,
    stack: LayerStack = DEFAULT_STACK,
    guard: ContentGuard | None = None,
) -> tuple[Fragment, ...]:
    """Enforce the layer order on one assembly; O(n) in fragments. :func:`memstack.context.assemble` runs the same
    checks on every assembly.

    Raises :class:`~memstack.errors.OverrideViolation` when the structure is wrong: the agent's core or
    characteristics changed since it was loaded, a fragment names a layer that is not in the stack, comes after a
    lower layer, carries a source that belongs to another layer, or the text of layers 1-2 differs from the agent's.
    Returns the fragments with the content checks applied: text in data layers that tries to take authority is
    flagged and, as its layer's entry says, kept inside its block marked flagged (neutralized) or left out of the
    prompt (quarantined). ``guard``: the content check (default :data:`RULES`)."""
    specs = check_structure(fragments, agent, stack)
    todo = [i for i, f in enumerate(fragments) if f.status is not FragmentStatus.QUARANTINED]
    checked = content_verdicts(
        [(specs[i], fragments[i].text, fragments[i].role, fragments[i].source) for i in todo], guard=guard
    )
    verdicts: list[Verdict] = [None] * len(fragments)
    for i, v in zip(todo, checked, strict=True):
        verdicts[i] = v
    out: list[Fragment] = []
    for fragment, verdict in zip(fragments, verdicts, strict=True):
        if verdict is None:
            out.append(fragment)
            continue
        found, action = verdict
        quarantine = action == OnFlag.QUARANTINE.value
        out.append(
            Fragment(
                layer=fragment.layer,
                source=fragment.source,
                text=fragment.text,
                tokens=fragment.tokens,
                pinned=fragment.pinned and not quarantine,
                flags=tuple(dict.fromkeys((*fragment.flags, *found))),
                status=FragmentStatus.QUARANTINED if quarantine else fragment.status,
                reason=verdict_reason(found, action),
                role=fragment.role,
                score=fragment.score,
            )
        )
    return tuple(out)
