"""A real receiving HTTP server for the webhook tests (stdlib ``http.server`` in a thread), verifying each delivery's
signature the way ``docs/webhooks.md`` tells a receiver to, independently of memstack's own code.

``mode`` says how it answers: ``ok`` (204), ``fail`` (500 with a body), ``hang`` (reads the request and never
answers until the test ends); :meth:`Receiver.down` closes the socket (connection refused) and :meth:`Receiver.up`
listens again on the same port.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Received", "Receiver", "verify"]


def verify(secret: str, body: bytes, header: str, *, tolerance_s: float = 300) -> bool:
    """The documented check: ``t=<unix>,v1=<hex>``, hex = HMAC-SHA256(secret, "<t>." + body), t within 5 minutes."""
    fields = dict(part.split("=", 1) for part in header.split(","))
    timestamp = int(fields["t"])
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return abs(time.time() - timestamp) <= tolerance_s and hmac.compare_digest(expected, fields["v1"])


@dataclass(frozen=True)
class Received:
    event: dict[str, Any]
    headers: dict[str, str]
    verified: bool
    at: float

    @property
    def event_id(self) -> str:
        return str(self.event["id"])

    @property
    def type(self) -> str:
        return str(self.event["type"])


class Receiver:
    def __init__(self) -> None:
        self.mode = "ok"
        self.secret = ""
        self.received: list[Received] = []
        self.refused_while_down = 0
        self._release = threading.Event()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/memstack"

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                signature = self.headers.get("Memstack-Signature", "")
                received = Received(
                    json.loads(body), dict(self.headers), verify(receiver.secret, body, signature), time.time()
                )
                with receiver._lock:
                    receiver.received.append(received)
                if receiver.mode == "hang":
                    receiver._release.wait(60)
                    return
                if receiver.mode == "fail":
                    self.send_response(500)
                    self.send_header("Content-Length", "13")
                    self.end_headers()
                    self.wfile.write(b"database down")
                    return
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        ThreadingHTTPServer.request_queue_size = 128  # a worker's batch connects at once
        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def close(self) -> None:
        self._release.set()
        self.down()

    def events(self, kind: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.received if kind is None or r.type == kind]
