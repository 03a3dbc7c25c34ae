"""The test fakes, for the measuring commands that run on them: whether ``memstack-testing`` is installed.

The fakes (an embedded PostgreSQL, a scripted OpenAI-compatible server, ``hash:<dim>``) are a distribution of their
own, outside the runtime wheel. A command that needs one calls :func:`need_fakes` first and then imports
``memstack_testing`` inside the function that uses it (``tests/test_layers.py`` holds every module to that), so a
runtime install answers ``memstack bench retrieval --backend postgres`` with one line naming the install command
instead of an ``ImportError``, and every other command never loads them.
"""

from __future__ import annotations

import importlib

from memstack.errors import MissingExtra

__all__ = ["EMBEDDED_POSTGRES", "POSTGRES_HINT", "need_fakes"]

EMBEDDED_POSTGRES = "the embedded PostgreSQL server"
POSTGRES_HINT = "or point MEMSTACK_DATABASE_URL at a PostgreSQL server with pgvector"


def need_fakes(what: str = EMBEDDED_POSTGRES, hint: str = POSTGRES_HINT) -> None:
    """Raise :class:`MissingExtra` naming ``what`` (and ``hint``, an alternative) unless the fakes import."""
    try:
        importlib.import_module("memstack_testing")
    except ImportError as exc:
        raise MissingExtra(what, hint) from exc
