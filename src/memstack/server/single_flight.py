"""One request at a time per key, and a copy of a request in flight waits for its answer instead of being done again.

``POST /v1/chat/completions`` maps a client's history onto a session (:mod:`memstack.server.threads`). Two calls
that start from the same history decide where they go from the same state of the store, so when they ran at once
each found the session still at the turn the history ends with and continued it: four copies of one call (the
OpenAI SDK retries a call that timed out, without an idempotency key) were four turns of one session, where the
same call sent again after the first was answered is a regenerated reply (a branch). Now the calls from one
history take turns, in every process sharing the store:

::

    call ──claim(key, fingerprint)──┬─ taken ──▶ run it ──▶ keep its answer (or give the key up) ──▶ answer
                                    ├─ the same request holds it ──▶ wait ──▶ its answer, replayed (one turn)
                                    └─ another request holds it  ──▶ wait ──▶ take the key, run (a branch)

* the key is a row of ``store.idempotency`` (its unique ``(tenant, key)``), claimed with ``take_answered``: an
  answered record is free for the next call, so a call sent after the first was answered runs and branches as a
  regenerated reply does; a waiting copy reads the answer before it asks for the key again;
* the same request is the same method, path, query and JSON body (:func:`~memstack.server.idempotency.fingerprint`),
  the test an ``Idempotency-Key`` applies; its answer comes back with ``Idempotent-Replayed: true``;
* a claim lasts ``ServerSettings.idempotency_stale_s`` (10 minutes): the row expires then, so a call whose process
  died holds up the others no longer than that, and answers are swept with the expired idempotency records;
* answers that ask for a retry (409, 5xx), an error raised and a stream cut short give the key up instead: a
  waiting copy then runs itself;
* waiting is polling the store (20 ms, doubling to 500 ms): copies are rare, and a row is what every process sees.

Records belong to the request's user (erased with them). An ``Idempotency-Key`` still applies on top: a retry with
the key is answered from its own record before it gets here.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable

from fastapi import Request
from starlette.responses import Response, StreamingResponse

from memstack.server.idempotency import REPLAYED, fingerprint, kept_status, recorded, settle
from memstack.server.state import ServerState
from memstack.types import UserRef, utcnow

__all__ = ["flight_key", "single_flight"]

#: Keys of this module start with a character no ``Idempotency-Key`` header may hold (printable ASCII only).
_PREFIX = "\u00a7flight:"


def flight_key(user: UserRef, what: str) -> str:
    """The key of the calls about ``what`` (a digest of a conversation's state, say) for one user."""
    digest = hashlib.sha256(f"{len(user.user_id)}:{user.user_id}:{what}".encode("utf-8", "surrogatepass"))
    return _PREFIX + digest.hexdigest()


async def single_flight(
    request: Request,
    st: ServerState,
    user: UserRef,
    key: str | None,
    work: Callable[[], Awaitable[Response]],
) -> Response:
    """``work()``'s answer, run when no other call holds ``key`` (see the module docstring); ``key=None``: the
    request's own fingerprint, so only copies of this request wait for one another."""
    fp = await fingerprint(request)
    key = key or flight_key(user, fp)
    store = st.engine.answers
    hold_s = st.settings.idempotency_stale_s
    delay, take = 0.02, True
    while True:
        found = await store.claim(user, key, fp, now=utcnow(), ttl_s=hold_s, stale_s=hold_s, take_answered=take)
        if found is None:
            break
        if found.status is not None:  # answered: seen only while waiting for a copy's answer (take is False)
            if found.fingerprint == fp:
                return Response(found.body, found.status, headers={REPLAYED: "true"}, media_type=found.content_type)
            take = True  # another call came and went meanwhile: take the key now
            continue
        take = found.fingerprint != fp  # a copy of ours: its answer is ours; another call: its turn, then ours
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.5)
    try:
        response = await work()
    except BaseException:
        await settle(store, user, key, fp, None)
        raise
    if isinstance(response, StreamingResponse):
        response.body_iterator = recorded(response.body_iterator, store, user, key, fp)
        return response
    answer = (response.status_code, bytes(response.body), response.media_type or "application/json")
    await settle(store, user, key, fp, answer if kept_status(response.status_code) else None)
    return response
