"""Local mode answers only requests addressed to this machine: a web page the user visits could otherwise reach the
API through DNS rebinding (a name of the attacker's that resolves to 127.0.0.1), since local mode asks no key."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from memstack.server.errors import error_response
from memstack.server.settings import is_loopback

__all__ = ["LoopbackHosts", "host_name"]


def host_name(header: str) -> str:
    """``127.0.0.1:8700`` → ``127.0.0.1``; ``[::1]:8700`` → ``::1``; ``localhost`` → ``localhost``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class LoopbackHosts:
    """403 for a request whose ``Host`` header names anything but a loopback address or ``localhost``."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
            if not is_loopback(host_name(host)):
                message = (
                    f"this server runs in local mode and answers requests for 127.0.0.1 or localhost only, not "
                    f"{host_name(host) or 'a request without a Host header'!r}; create an API key "
                    "(`memstack keys create`) to serve other hosts"
                )
                await error_response(403, "Forbidden", message)(scope, receive, send)
                return
        await self._app(scope, receive, send)
