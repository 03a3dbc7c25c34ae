"""The web UI, served at ``/`` by ``memstack serve``: memory manager, sessions and recall, chat playground
and context inspector.

No build step: ``static/`` holds one HTML page, a style sheet and plain ES modules that call the JSON API with
``fetch`` (the same endpoints any client uses). Everything the API returns is rendered as text, never as HTML, and the
page is served with a Content-Security-Policy that allows scripts from this server only.

Auth follows the server's mode. In local mode the UI works without a key; in keys mode it asks for an API key, keeps
it in the tab's ``sessionStorage`` (gone when the tab closes) and sends it as ``Authorization: Bearer KEY``. The page
and its static files hold no data and need no key.

Two small endpoints exist for the UI only (kept out of the OpenAPI schema):

* ``GET /ui/api/info``: the auth mode, tiers, categories and the layer stack, so the page can ask for a key before
  its first call and show the ten layers in their order. Open, like ``/healthz``: it holds no user data.
* ``GET /ui/api/contexts/{context_id}?user_id=U``: the manifest of one response, summed per layer in stack order,
  with the long-term memories placed in it resolved to their current text (the inspector's one request).
* ``GET /ui/api/users/{user_id}/contexts``: the user's latest responses (the inspector's list).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from starlette.responses import Response
from starlette.staticfiles import StaticFiles

from memstack.errors import NotFound
from memstack.server.state import CallerDep, StateDep
from memstack.server.wire import json_response, memory_json
from memstack.types import Category, FragmentStatus, Manifest, Memory

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memstack.context.stack import LayerStack

__all__ = ["CSP", "inspect_manifest", "mount_ui", "router"]

STATIC_DIR = Path(__file__).parent / "static"
MEMORY_PREFIX = "memory:"

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)

UserId = Annotated[str, PathParam(min_length=1, max_length=200)]
ContextId = Annotated[str, PathParam(min_length=1, max_length=200)]


@cache
def _index_html() -> bytes:
    return (STATIC_DIR / "index.html").read_bytes()


@router.get("/")
async def index() -> Response:
    """The single page; the hash part of the URL picks the view (``#/memories``, ``#/chat``, ``#/inspect/ID``)."""
    return Response(_index_html(), media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)


@router.get("/ui/api/info")
async def info(st: StateDep) -> Response:
    from memstack import __version__
    from memstack.context.stack import DEFAULT_STACK

    tiers = st.engine.config.tiers
    return json_response(
        {
            "version": __version__,
            "auth": "local" if st.keys.local else "keys",
            "tiers": dict(tiers.limits),
            "default_tier": tiers.name_for(None),
            "categories": [c.value for c in Category],
            "layers": _layers(DEFAULT_STACK),
        }
    )


@router.get("/ui/api/users/{user_id}/contexts")
async def recent_contexts(
    st: StateDep,
    caller: CallerDep,
    user_id: UserId,
    session_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Response:
    manifests = await st.engine.contexts.recent(caller.user(user_id), session_id=session_id, limit=limit)
    return json_response({"contexts": [_context_line(m) for m in manifests]})


@router.get("/ui/api/contexts/{context_id}")
async def context_detail(
    st: StateDep,
    caller: CallerDep,
    context_id: ContextId,
    user_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> Response:
    from memstack.context.stack import DEFAULT_STACK

    manifest = await st.engine.contexts.get(context_id, user_id=user_id, tenant=caller.tenant)
    found: dict[str, Memory] = {}
    if user_id is not None:
        user = caller.user(user_id)
        for memory_id in _memory_ids(manifest):
            try:
                found[memory_id] = await st.engine.get(user, memory_id)
            except NotFound:
                continue  # deleted for good since this response: shown as such
    return json_response(inspect_manifest(manifest, DEFAULT_STACK, found, user_known=user_id is not None))


def mount_ui(app: FastAPI) -> None:
    """Serve the UI from ``app``: the page at ``/``, its files under ``/ui/static``, the two UI endpoints."""
    app.include_router(router)
    app.mount("/ui/static", _Static(directory=STATIC_DIR), name="ui-static")


class _Static(StaticFiles):
    """The UI's files with the page's security headers; revalidated (ETag) on every load so an upgrade shows."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(_PAGE_HEADERS)
        return response


# -- the inspector's view of a manifest ----------------------------------------------------------------------------


def _layers(stack: LayerStack) -> list[dict[str, Any]]:
    return [
        {"position": position, "key": spec.key, "title": spec.title, "trim": spec.trim.value, "data": spec.data}
        for position, spec in enumerate(stack, start=1)
    ]


def _memory_ids(manifest: Manifest) -> list[str]:
    seen: dict[str, None] = {}
    for entry in manifest.entries:
        if entry.source.startswith(MEMORY_PREFIX):
            seen.setdefault(entry.source[len(MEMORY_PREFIX) :], None)
    return list(seen)


def _context_line(manifest: Manifest) -> dict[str, Any]:
    return {
        "context_id": manifest.context_id,
        "created_at": manifest.created_at.isoformat(),
        "agent": manifest.agent,
        "model": manifest.model,
        "tokens": manifest.tokens,
        "budget_tokens": manifest.budget_tokens,
        "memory_enabled": manifest.memory_enabled,
        "memories": sum(1 for e in manifest.entries if e.source.startswith(MEMORY_PREFIX)),
        "trimmed": manifest.count(FragmentStatus.TRIMMED),
        "quarantined": manifest.count(FragmentStatus.QUARANTINED),
    }


def inspect_manifest(
    manifest: Manifest, stack: LayerStack, memories: Mapping[str, Memory], *, user_known: bool = True
) -> dict[str, Any]:
    """The inspector's data: every layer of ``stack`` in order (empty ones too) with its fragments and the tokens the
    model saw from it (kept fragments only), and the memories placed in the context with their current text.

    A layer the manifest names but the stack does not know (an added layer) is kept, after the known ones, so
    nothing the model saw is hidden."""
    by_layer: dict[str, list[dict[str, Any]]] = {}
    for entry in manifest.entries:
        by_layer.setdefault(entry.layer, []).append(
            {
                "source": entry.source,
                "tokens": entry.tokens,
                "status": entry.status.value,
                "flags": list(entry.flags),
                "reason": entry.reason,
                "text": entry.text,
            }
        )
    layers = _layers(stack)
    known = {layer["key"] for layer in layers}
    for key in by_layer:
        if key not in known:
            layers.append({"position": len(layers) + 1, "key": key, "title": key, "trim": "unknown", "data": True})
    for layer in layers:
        fragments = by_layer.get(layer["key"], [])
        layer["fragments"] = fragments
        layer["tokens"] = sum(f["tokens"] for f in fragments if f["status"] == FragmentStatus.KEPT.value)
        layer["tokens_removed"] = sum(f["tokens"] for f in fragments if f["status"] != FragmentStatus.KEPT.value)
        for status in FragmentStatus:
            layer[status.value] = sum(1 for f in fragments if f["status"] == status.value)
    return {
        "manifest": manifest.to_dict(),
        "layers": layers,
        "counts": {status.value: manifest.count(status) for status in FragmentStatus},
        # Tokens of the rendering itself (section titles, notes, data-block delimiters, message framing).
        "framing_tokens": max(0, manifest.tokens - sum(layer["tokens"] for layer in layers)),
        "memories_used": list(_memories_used(manifest, memories, user_known)),
    }


def _memories_used(manifest: Manifest, memories: Mapping[str, Memory], user_known: bool) -> Iterable[dict[str, Any]]:
    for entry in manifest.entries:
        if not entry.source.startswith(MEMORY_PREFIX):
            continue
        memory_id = entry.source[len(MEMORY_PREFIX) :]
        memory = memories.get(memory_id)
        yield {
            "id": memory_id,
            "status": entry.status.value,
            "tokens": entry.tokens,
            "flags": list(entry.flags),
            "memory": memory_json(memory) if memory is not None else None,
            "gone": user_known and memory is None,
        }
