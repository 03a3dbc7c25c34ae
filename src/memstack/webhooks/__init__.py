"""Webhooks: memstack's changes told to a tenant's endpoints, signed, retried, at least once (``docs/webhooks.md``).

The events are written to an outbox in the transaction of each change (:mod:`memstack.store._outbox`);
:mod:`memstack.webhooks.worker` delivers them; :mod:`memstack.webhooks.signing` signs them (and verifies a
signature, for receivers written in Python); :mod:`memstack.webhooks.urls` decides which URLs memstack will call.
"""

from __future__ import annotations

from memstack.webhooks.signing import SIGNATURE_HEADER, sign, verify_signature

__all__ = ["SIGNATURE_HEADER", "sign", "verify_signature"]
