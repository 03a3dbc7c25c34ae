"""Where a LangGraph namespace puts an item in memstack: whose memory it is (tenant, user, agent) and how the item's
namespace and key are kept in the memory's metadata.

A LangGraph namespace is a free tuple of labels; memstack's data belongs to a user (of a tenant, maybe written by an
agent). A :class:`Layout` is a template for the namespace's leading labels: ``"{user_id}"`` (required, once),
``"{tenant}"`` and ``"{agent_id}"`` (optional) are read from the namespace, any other label must be there as
written; the labels after the template are the caller's own. ``("{user_id}",)`` (the default) reads
``("alice", "memories")`` as user ``alice``; ``("{tenant}", "{user_id}")`` puts the tenant first;
``("memories", "{user_id}")`` is LangMem's layout; ``("{user_id}", "agent", "{agent_id}")`` stores what an agent
writes as that agent's memories (memstack's ``agent_id``).

Every label of the namespace is kept in metadata (``langgraph:ns0`` …, with ``langgraph:depth`` and the item's
``langgraph:key``), the template's labels included: a get, put or delete filters on all of them, so items of two
namespaces never meet, and a search's namespace prefix is an exact metadata filter on its labels (done by the
store, not after it). LangGraph forbids ``.`` in labels, so a namespace also reads back unambiguously.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memstack.errors import InputError

__all__ = ["DEPTH", "KEY", "PREFIX", "TEXT", "Layout", "Owner", "exact", "level", "namespace_of", "prefix_filter"]

PREFIX = "langgraph:"
KEY = "langgraph:key"
DEPTH = "langgraph:depth"
TEXT = "langgraph:text"  # the value field the memory's content came from; null: the content renders the whole value
PLACEHOLDERS = ("{user_id}", "{tenant}", "{agent_id}")


def level(i: int) -> str:
    """The metadata key of the namespace's ``i``-th label."""
    return f"{PREFIX}ns{i}"


@dataclass(frozen=True, slots=True)
class Owner:
    """Whose memory an item is: memstack's user, tenant (``None``: the engine's default) and agent."""

    user_id: str
    tenant: str | None
    agent_id: str | None


@dataclass(frozen=True, slots=True)
class Layout:
    template: tuple[str, ...] = ("{user_id}",)
    tenant: str | None = None  # the tenant when the template has no "{tenant}"

    def __post_init__(self) -> None:
        if self.template.count("{user_id}") != 1:
            raise InputError(f'a namespace layout names "{{user_id}}" exactly once, got {self.template!r}')
        for name in ("{tenant}", "{agent_id}"):
            if self.template.count(name) > 1:
                raise InputError(f"a namespace layout names {name} at most once, got {self.template!r}")
        if "{tenant}" in self.template and self.tenant is not None:
            raise InputError('pass tenant= or put "{tenant}" in the namespace layout, not both')
        for label in self.template:
            if label.startswith("{") and label not in PLACEHOLDERS:
                raise InputError(
                    f"unknown placeholder {label!r} in the namespace layout; use {', '.join(PLACEHOLDERS)}"
                )

    def owner(self, namespace: tuple[str, ...]) -> Owner:
        """Whose memory an item of ``namespace`` is; ``InputError`` when the namespace does not fit the layout."""
        if len(namespace) < len(self.template):
            raise InputError(f"namespace {namespace!r} is shorter than the layout {self.template!r}: {self._hint()}")
        found: dict[str, str] = {}
        for label, want in zip(namespace, self.template, strict=False):
            if want in PLACEHOLDERS:
                found[want] = label
            elif label != want:
                raise InputError(f"namespace {namespace!r} has {label!r} where the layout has {want!r}: {self._hint()}")
        return Owner(found["{user_id}"], found.get("{tenant}", self.tenant), found.get("{agent_id}"))

    def scope(self, prefix: tuple[str, ...]) -> tuple[str | None, str | None]:
        """For a search or listing under ``prefix``: the user it names (``None``: every user of the tenant) and the
        tenant. ``InputError`` when the prefix leaves the tenant open (memstack lists users, not tenants) or
        contradicts a literal label."""
        user: str | None = None
        tenant = self.tenant
        tenant_known = "{tenant}" not in self.template
        for label, want in zip(prefix, self.template, strict=False):
            if want == "{user_id}":
                user = label
            elif want == "{tenant}":
                tenant, tenant_known = label, True
            elif want not in PLACEHOLDERS and label != want:
                return None, tenant  # nothing under it: the caller finds no items
        if not tenant_known:
            raise InputError(
                f"a search or listing under {prefix!r} would span tenants; start the prefix with the tenant "
                f"(layout {self.template!r})"
            )
        return user, tenant

    def fits(self, prefix: tuple[str, ...]) -> bool:
        """Whether a namespace under ``prefix`` can fit the layout (its literal labels match)."""
        return all(want in PLACEHOLDERS or label == want for label, want in zip(prefix, self.template, strict=False))

    def _hint(self) -> str:
        return f"this store reads namespaces as {self.template!r} followed by labels of your own"


def exact(namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    """The metadata filter of one item."""
    return {**prefix_filter(namespace), DEPTH: len(namespace), KEY: key}


def prefix_filter(prefix: tuple[str, ...]) -> dict[str, Any]:
    """The metadata filter of every item under ``prefix``."""
    return {level(i): label for i, label in enumerate(prefix)}


def namespace_of(metadata: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The namespace kept in a memory's metadata; ``None`` for a memory no LangGraph store wrote."""
    depth = metadata.get(DEPTH)
    if not isinstance(depth, int) or isinstance(depth, bool) or KEY not in metadata:
        return None
    labels = [metadata.get(level(i)) for i in range(depth)]
    if not all(isinstance(label, str) for label in labels):
        return None
    return tuple(str(label) for label in labels)
