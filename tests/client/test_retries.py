"""The client's retries are safe (issue 13): a write whose answer was lost on the way back (the server did the work,
the connection dropped) is retried with the same ``Idempotency-Key`` and done once. A real server behind a real
TCP proxy that drops the connection as the server's answer arrives."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from urllib.parse import urlparse

import pytest

from memstack.client import AsyncMemstackClient
from memstack.errors import StoreUnavailable

from .conftest import Servers


class DroppingProxy:
    """Forwards connections to ``upstream``; while ``drop`` is above zero, an answer from the server is swallowed
    and the client's connection closed instead (``dropped`` counts them)."""

    def __init__(self, upstream: str) -> None:
        parsed = urlparse(upstream)
        self._host, self._port = parsed.hostname or "127.0.0.1", parsed.port or 80
        self.drop = 0
        self.dropped = 0
        self.url = ""
        self._tasks: set[asyncio.Task[None]] = set()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answers: bool) -> None:
        try:
            while data := await reader.read(65536):
                if answers and self.drop > 0:  # the server answered: the client never hears it
                    self.drop -= 1
                    self.dropped += 1
                    break
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection(self._host, self._port)
        await asyncio.gather(self._pipe(client_r, up_w, False), self._pipe(up_r, client_w, True))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[DroppingProxy]:
        def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(self._serve(r, w))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            yield self
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task


@pytest.fixture
async def proxy(servers: Servers) -> AsyncIterator[DroppingProxy]:
    async with DroppingProxy(servers.local).running() as running:
        yield running


async def test_a_write_whose_answer_was_lost_is_done_once(proxy: DroppingProxy) -> None:
    async with AsyncMemstackClient(proxy.url) as ms:
        assert await ms.count("retry-user") == 0
        proxy.drop = 1
        # force: without the key, the retry would store a second copy
        memory = await ms.add("retry-user", "User keeps bees on the roof", force=True)
        assert proxy.dropped == 1
        assert [m.id for m in await ms.list("retry-user")] == [memory.id]
        proxy.drop = 1
        turn = await ms.chat("retry-user", "Hello there")
        assert proxy.dropped == 2 and turn.turn == 1
        again = await ms.chat("retry-user", "And again", session_id=turn.session_id)
        assert again.turn == 2  # the first turn was taken once, not twice


async def test_without_retries_a_lost_answer_is_an_error(proxy: DroppingProxy) -> None:
    async with AsyncMemstackClient(proxy.url, retries=0) as ms:
        assert await ms.count("no-retry-user") == 0
        proxy.drop = 1
        with pytest.raises(StoreUnavailable, match="cannot reach"):
            await ms.add("no-retry-user", "User keeps bees")
        assert await ms.count("no-retry-user") == 1  # the server did it; the client was not told
