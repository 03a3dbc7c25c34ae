"""The Python client of memstack's HTTP API: the methods of ``AsyncMemstack``/``Memstack``, answered by a server."""

from memstack.client.async_client import AsyncMemstackClient
from memstack.client.sync_client import MemstackClient

__all__ = ["AsyncMemstackClient", "MemstackClient"]
