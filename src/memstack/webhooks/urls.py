"""Which URLs memstack calls: ``http(s)://`` with a host and no credentials, and, unless the deployment allows it,
none that resolves to an address outside the public internet (private, loopback, link-local, shared or reserved:
``ipaddress``'s ``is_global``). A tenant of a hosted memstack could otherwise point an endpoint at the host's own
services or its cloud's metadata address and read what they answer in the delivery's recorded error.

The check runs when an endpoint is created or its URL changed (refused with :class:`~memstack.errors.WebhookRefused`)
and again before every attempt (the name may resolve elsewhere by then: a failed delivery, not retried). A name
that resolves to a public address for the check and a private one for the connection a moment later is not caught;
a deployment that must rule that out sends webhooks through an egress proxy.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from memstack.errors import WebhookRefused

__all__ = ["check_url", "check_url_form"]

_FIX = "set webhooks_allow_private ($MEMSTACK_WEBHOOKS_ALLOW_PRIVATE=true) to allow it in a trusted deployment"


def check_url_form(url: str) -> tuple[str, int]:
    """``url``'s host and port, or ``WebhookRefused`` saying what a webhook URL must look like."""
    if not isinstance(url, str) or len(url) > 2048:
        raise WebhookRefused("a webhook URL must be text of at most 2048 characters, like https://example.com/hook")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise WebhookRefused(f"{url!r} is not a URL ({exc}); send one like https://example.com/hook") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookRefused(f"a webhook URL must start with https:// or http://, got {url!r}")
    if not parts.hostname:
        raise WebhookRefused(f"the webhook URL {url!r} names no host; send one like https://example.com/hook")
    if parts.username is not None or parts.password is not None:
        raise WebhookRefused("a webhook URL must not carry a user name or password; the signature authenticates")
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _private(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return not ip.is_global or ip.is_multicast


async def check_url(url: str, *, allow_private: bool) -> None:
    """``WebhookRefused`` when memstack will not call ``url``: a malformed one, one whose host does not resolve, or
    (unless ``allow_private``) one whose host has any address outside the public internet."""
    host, port = check_url_form(url)
    if allow_private:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise WebhookRefused(f"the webhook host {host!r} does not resolve ({exc}); check the URL") from None
    private = sorted({str(info[4][0]) for info in infos if _private(str(info[4][0]))})
    if private:
        raise WebhookRefused(
            f"the webhook URL {url!r} reaches {', '.join(private)}, a private, loopback or link-local address, "
            f"which this deployment does not call; use a public URL, or {_FIX}"
        )
