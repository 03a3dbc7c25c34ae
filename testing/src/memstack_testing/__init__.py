"""Fakes of *external* services for memstack's tests and measuring commands, never of memstack itself: a scripted
OpenAI-compatible HTTP server (:mod:`~memstack_testing.openai_server`), an embedded PostgreSQL
(:mod:`~memstack_testing.postgres`) and a hashing embedder (:mod:`~memstack_testing.hashing`, ``hash:<dim>``).

They are a distribution of their own (``memstack-testing``, in the repository's ``testing/`` folder), not part of
the ``memstack`` wheel: the runtime never imports them. The tests do, and so do ``memstack bench …`` and
``memstack eval … --backend postgres``, inside the functions that use them, after
:func:`memstack.bench._fakes.need_fakes` has turned their absence into :class:`~memstack.errors.MissingExtra` with
the install command (``pip install -e ./testing``; ``make install`` does it).
"""
