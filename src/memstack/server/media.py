"""What a request body may be: JSON (``application/json``, or a ``+json`` type), and for an agent definition
(``PUT /v1/agents/{name}``) also YAML. A ``POST``, ``PUT`` or ``PATCH`` with a body of any other content type, or
with a body and no content type, is 415, before the body is read.

Why so strict: a web page of another site can make a browser send a "simple" request without asking the server
first, and a simple request's body can only be ``text/plain``, form-encoded, multipart, or untyped. Refusing those
bodies is what keeps such a page from making the API act (local mode asks no key, and the search route used to read
any body as JSON). Every client memstack documents (its own, the OpenAI SDK, the web UI, curl with
``-H 'Content-Type: application/json'``) already says JSON. A write without a body (restore, end a session) needs no
content type.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from memstack.server.errors import error_response

__all__ = ["YAML_TYPES", "JsonBodies", "body_type_refused"]

#: The media types an agent definition may also be sent as (``memstack.server.agents`` parses them).
YAML_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"})

_BODIES = frozenset({"POST", "PUT", "PATCH"})
_AGENTS = "/v1/agents/"


def _is_json(media: str) -> bool:
    kind, _, subtype = media.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def body_type_refused(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> str | None:
    """Why a request's body is refused (the 415's message), or ``None`` when it may be read."""
    if method not in _BODIES:
        return None
    content_type = length = chunked = None
    for name, value in headers:
        if name == b"content-type":
            content_type = value.decode("latin-1")
        elif name == b"content-length":
            length = value
        elif name == b"transfer-encoding":
            chunked = value
    yaml = method == "PUT" and path.startswith(_AGENTS)
    path = path if len(path) <= 200 else path[:200] + "…"
    accepted = "application/json" + (" (or application/yaml)" if yaml else "")
    if content_type is None:
        if chunked is None and (length is None or length.strip() == b"0"):
            return None  # no body: nothing to read
        return f"{method} {path} takes a JSON body: send it with the header Content-Type: {accepted}"
    media = content_type.split(";", 1)[0].strip().lower()
    if _is_json(media) or (yaml and media in YAML_TYPES):
        return None
    return (
        f"{method} {path} takes a JSON body, not {media or 'an empty content type'!r}: send it with the header "
        f"Content-Type: {accepted}"
    )


class JsonBodies:
    """415 for a request whose body :func:`body_type_refused` refuses."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = body_type_refused(scope["method"], scope.get("path", ""), scope["headers"])
            if refused is not None:
                await error_response(415, "UnsupportedMediaType", refused)(scope, receive, send)
                return
        await self._app(scope, receive, send)
