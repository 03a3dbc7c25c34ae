"""memstack for LangGraph (the ``langgraph`` extra): :class:`MemstackStore`, a LangGraph ``BaseStore`` whose items
are memstack memories, and :func:`memory_tools`, tools a LangChain agent remembers, recalls and forgets with.

``pip install 'memstack[langgraph]'``; without LangGraph, importing this module raises ``MissingExtra`` with that
command. Nothing else in memstack imports it."""

from memstack.errors import MissingExtra

try:
    import langchain_core  # noqa: F401
    import langgraph.store.base  # noqa: F401
except ImportError as exc:
    raise MissingExtra(
        "memstack.adapters.langgraph", package="langgraph", install="pip install 'memstack[langgraph]'"
    ) from exc

from memstack.adapters.langgraph._store import MemstackStore
from memstack.adapters.langgraph._tools import memory_tools

__all__ = ["MemstackStore", "memory_tools"]
