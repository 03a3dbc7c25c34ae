"""Local mode answers only requests addressed to this machine: a web page the user visits could otherwise reach the
API through DNS rebinding (a name of the attacker's that resolves to 127.0.0.1), since local mode asks no key.

The ``Host`` header is read strictly: a loopback name or address and an optional numeric port, nothing else. A lax
reading (everything before the last colon) took ``localhost:80@evil.com`` for ``localhost``; what a proxy, a log or
a later URL built from the header makes of such a value is not for this check to guess, so it is refused."""

from __future__ import annotations

import ipaddress
import re

from starlette.types import ASGIApp, Receive, Scope, Send

from memstack.server.errors import error_response

__all__ = ["LoopbackHosts", "loopback_host"]

_HOST = re.compile(
    r"(?:(?P<v4>[0-9]{1,3}(?:\.[0-9]{1,3}){3})|\[(?P<v6>[0-9a-f:.]+)\]|localhost)(?::(?P<port>[0-9]{1,5}))?",
    re.IGNORECASE | re.ASCII,
)


def loopback_host(header: str) -> bool:
    """Whether a ``Host`` header names this machine and nothing more: ``localhost``, an IPv4 loopback address
    (127.0.0.0/8, four decimal parts: ``127.0.0.1``), or an IPv6 one in brackets (``[::1]``), each with an optional
    port of digits (at most 65535). Anything else is not: user info (``localhost:80@evil.com``), a path, a trailing
    dot, an IPv6 address without brackets, an empty port, another name."""
    found = _HOST.fullmatch(header)
    if found is None or (found["port"] is not None and int(found["port"]) > 65535):
        return False
    try:
        if found["v4"] is not None:
            return ipaddress.IPv4Address(found["v4"]).is_loopback
        if found["v6"] is not None:
            return ipaddress.IPv6Address(found["v6"]).is_loopback
    except ValueError:  # 127.0.0.256, 127.00.0.1, a malformed IPv6 address
        return False
    return True  # localhost


class LoopbackHosts:
    """403 for a request whose ``Host`` header is not :func:`loopback_host`."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
            if not loopback_host(host):
                shown = repr(host[:100]) if host else "a request without a Host header"
                message = (
                    "this server runs in local mode and answers requests for 127.0.0.1, [::1] or localhost only "
                    f"(with an optional port), not {shown}; create an API key (`memstack keys create`) to serve "
                    "other hosts"
                )
                await error_response(403, "Forbidden", message)(scope, receive, send)
                return
        await self._app(scope, receive, send)
