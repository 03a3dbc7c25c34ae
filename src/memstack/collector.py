"""The garbage collector's policy for a long-running memstack process (``memstack serve``, ``memstack bench turn``).

A warm process holds large long-lived heaps (the embedding model's session, caches of vectors, verdicts and token
counts). Python's full collection walks all of them: on this project's benchmark machine one took 18–37 ms in the
middle of a chat turn, the whole of that turn's tail. :func:`keep_collector` collects the young objects every so
often and moves every live object out of the collector's sight (``gc.freeze``), so a later collection walks only
what is new. A library does not do this to its host process unasked: ``memstack serve`` does it every 10 s
(``ServerSettings.gc_freeze_s``), and an application embedding the engine can run the same task.
"""

from __future__ import annotations

import asyncio
import gc

__all__ = ["keep_collector"]


async def keep_collector(every_s: float) -> None:
    """Until cancelled: collect what is not frozen yet (little, after the first round), then freeze it; every
    ``every_s`` seconds."""
    while True:
        gc.collect()
        gc.freeze()
        await asyncio.sleep(every_s)
