"""The HTTP API (FastAPI): memories, recall and import, agents, sessions, contexts, chat and delegation, and an
OpenAI-compatible endpoint.

``create_app(engine_or_config)`` builds the app; ``memstack serve`` runs it with uvicorn. FastAPI is imported only
when this package is.
"""

from __future__ import annotations

from memstack.server.app import create_app
from memstack.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]
