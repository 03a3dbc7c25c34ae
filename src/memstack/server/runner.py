"""Run the app on a real socket in a background thread: for tests, notebooks and embedding in another program.

::

    with BackgroundServer(create_app(config)) as server:
        httpx.get(f"{server.url}/healthz")

Port 0 (the default) takes a free port; ``server.url`` says which. The thread runs uvicorn's own event loop, so the
server is reached over loopback HTTP exactly as a client in another process would reach it.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any, Self

from memstack.errors import ConfigError

__all__ = ["BackgroundServer"]


class BackgroundServer:
    """A uvicorn server for ``app`` on ``host:port`` in a daemon thread; a context manager."""

    def __init__(self, app: Any, *, host: str = "127.0.0.1", port: int = 0, start_timeout_s: float = 30.0) -> None:
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
        self._server = uvicorn.Server(config)
        self._host = host
        self._timeout = start_timeout_s
        self._thread: threading.Thread | None = None
        self.port = port

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._server.run, name="memstack-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + self._timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise ConfigError(f"the HTTP server did not start on {self._host}:{self.port}; see the log above")
            time.sleep(0.02)
        servers = getattr(self._server, "servers", [])
        if servers and servers[0].sockets:
            self.port = int(servers[0].sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=self._timeout)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
