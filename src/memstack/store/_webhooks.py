"""The ``webhooks`` role on both backends: a tenant's endpoints (``webhook_endpoints``) and the deliveries of the
outbox (``webhook_outbox``, written by :mod:`memstack.store._outbox` inside each change's transaction).

A delivery is claimed with a lease: one statement moves the lease of due, unleased (or lapsed) pending rows to the
claiming worker, so two workers never hold the same row at once; on PostgreSQL the ``UPDATE`` re-reads a row another
worker claimed meanwhile and skips it, on SQLite the write transaction holds the file. The worker's outcome is written
only while it still holds the lease (``lease_owner``), so a worker that stalled past its lease cannot overwrite the
result of the one that took the row over. Times come from the caller (the worker's clock), so both backends behave
the same; leases are long beside any clock skew between hosts (seconds), and at worst one event is sent twice, which
at-least-once delivery allows.

Endpoints and deliveries are a tenant's rows, not a user's: their writes are outside the erasure fence (an erasure
deletes the user's outbox rows itself, and a delivery's outcome written after it changes no row).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime

from memstack.errors import NotFound
from memstack.store._outbox import OUTBOX_COLUMNS
from memstack.store._sql import Row, Sql, Tx
from memstack.types import DeliveryStatus, WebhookDelivery, WebhookEndpoint, new_id

__all__ = ["Webhooks"]

_ENDPOINT = "id, tenant, url, events, enabled, description, created_at, updated_at"
_DELIVERY = (
    "id, event_id, endpoint_id, tenant, user_id, type, occurred_at, payload, status, attempts, next_at, "
    "last_status, last_error, created_at, delivered_at"
)


class Webhooks:
    """Rows of ``webhook_endpoints`` and ``webhook_outbox`` over a backend's :class:`~memstack.store._sql.Sql`."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql

    # -- rows as objects ---------------------------------------------------------------------------------------------

    def _endpoint(self, row: Row, secret: str | None = None) -> WebhookEndpoint:
        id_, tenant, url, events, enabled, description, created, updated = row
        when = self._sql.when
        return WebhookEndpoint(
            str(id_), str(tenant), str(url), tuple(self._sql.unjson(events)), bool(enabled), str(description),
            when(created), when(updated), secret,
        )  # fmt: skip

    def _delivery(self, row: Row) -> WebhookDelivery:
        (id_, event, endpoint, tenant, user_id, kind, occurred, payload, status, attempts, next_at, last_status,
         last_error, created, delivered) = row  # fmt: skip
        when = self._sql.when
        return WebhookDelivery(
            str(id_), str(event), str(endpoint), str(tenant), str(user_id), str(kind), when(occurred),
            self._sql.unjson(payload), DeliveryStatus(status), int(attempts),
            when(next_at) if status == DeliveryStatus.PENDING else None,
            None if last_status is None else int(last_status), last_error, when(created), when(delivered),
        )  # fmt: skip

    # -- endpoints ---------------------------------------------------------------------------------------------------

    async def create(
        self,
        tenant: str,
        url: str,
        events: Sequence[str],
        secret: str,
        *,
        description: str,
        enabled: bool,
        now: datetime,
    ) -> WebhookEndpoint:
        """A new endpoint; what it returns carries ``secret`` (the only read that does)."""
        endpoint = WebhookEndpoint(new_id("whe"), tenant, url, tuple(events), enabled, description, now, now, secret)
        await self._sql.execute(
            f"INSERT INTO webhook_endpoints ({_ENDPOINT}, secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (endpoint.id, tenant, url, self._sql.json(list(events)), enabled, description, now, now, secret),
            fenced=False,
        )
        return endpoint

    async def list(self, tenant: str) -> builtins.list[WebhookEndpoint]:
        rows = await self._sql.all(
            f"SELECT {_ENDPOINT} FROM webhook_endpoints WHERE tenant = ? ORDER BY created_at, id", (tenant,)
        )
        return [self._endpoint(r) for r in rows]

    async def get(self, tenant: str, endpoint_id: str) -> WebhookEndpoint:
        row = await self._sql.one(
            f"SELECT {_ENDPOINT} FROM webhook_endpoints WHERE tenant = ? AND id = ?", (tenant, endpoint_id)
        )
        if row is None:
            raise NotFound("webhook", endpoint_id)
        return self._endpoint(row)

    async def secret(self, tenant: str, endpoint_id: str) -> tuple[str, str] | None:
        """The endpoint's URL and signing secret, for the worker; ``None`` once it is deleted."""
        row = await self._sql.one(
            "SELECT url, secret FROM webhook_endpoints WHERE tenant = ? AND id = ?", (tenant, endpoint_id)
        )
        return None if row is None else (str(row[0]), str(row[1]))

    async def update(
        self,
        tenant: str,
        endpoint_id: str,
        *,
        url: str | None,
        events: Sequence[str] | None,
        enabled: bool | None,
        description: str | None,
        now: datetime,
    ) -> WebhookEndpoint:
        events_json = None if events is None else self._sql.json(list(events))
        changed = await self._sql.execute(
            "UPDATE webhook_endpoints SET url = COALESCE(?, url), events = COALESCE(?, events), "
            "enabled = COALESCE(?, enabled), description = COALESCE(?, description), updated_at = ? "
            "WHERE tenant = ? AND id = ?",
            (url, events_json, enabled, description, now, tenant, endpoint_id),
            fenced=False,
        )
        if changed != 1:
            raise NotFound("webhook", endpoint_id)
        return await self.get(tenant, endpoint_id)

    async def delete(self, tenant: str, endpoint_id: str) -> None:
        """The endpoint and every delivery to it (pending ones are not sent)."""

        async def body(tx: Tx) -> int:
            await tx.execute("DELETE FROM webhook_outbox WHERE tenant = ? AND endpoint_id = ?", (tenant, endpoint_id))
            return await tx.execute("DELETE FROM webhook_endpoints WHERE tenant = ? AND id = ?", (tenant, endpoint_id))

        if await self._sql.write(body, fenced=False) != 1:
            raise NotFound("webhook", endpoint_id)

    # -- deliveries --------------------------------------------------------------------------------------------------

    async def deliveries(
        self, tenant: str, endpoint_id: str, *, status: DeliveryStatus | None = None, limit: int = 50
    ) -> builtins.list[WebhookDelivery]:
        """The endpoint's most recent deliveries first."""
        await self.get(tenant, endpoint_id)  # NotFound for another tenant's or an unknown endpoint
        where, args = "tenant = ? AND endpoint_id = ?", [tenant, endpoint_id]
        if status is not None:
            where, args = f"{where} AND status = ?", [*args, status.value]
        return await self._sql.mapped(
            f"SELECT {_DELIVERY} FROM webhook_outbox WHERE {where} ORDER BY {self._sql.key} DESC LIMIT ?",
            (*args, limit),
            self._delivery,
        )

    async def delivery(self, tenant: str, delivery_id: str) -> WebhookDelivery:
        row = await self._sql.one(
            f"SELECT {_DELIVERY} FROM webhook_outbox WHERE tenant = ? AND id = ?", (tenant, delivery_id)
        )
        if row is None:
            raise NotFound("webhook delivery", delivery_id)
        return self._delivery(row)

    async def replay(
        self, tenant: str, delivery_id: str, *, now: datetime, endpoint_id: str | None = None
    ) -> WebhookDelivery:
        """A new pending delivery of the same event (same event id) to the same endpoint, due now (``endpoint_id``:
        only if the delivery is that endpoint's)."""
        new = new_id("whd")

        async def body(tx: Tx) -> int:
            return await tx.execute(
                f"INSERT INTO webhook_outbox ({OUTBOX_COLUMNS}) SELECT ?, event_id, endpoint_id, tenant, user_id, "
                "type, occurred_at, payload, 'pending', 0, ?, ? FROM webhook_outbox o WHERE o.tenant = ? AND o.id = ? "
                "AND o.endpoint_id = COALESCE(?, o.endpoint_id) "
                "AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.tenant = o.tenant AND e.id = o.endpoint_id)",
                (new, now, now, tenant, delivery_id, endpoint_id),
            )

        if await self._sql.write(body, fenced=False) != 1:
            raise NotFound("webhook delivery", delivery_id)
        return await self.delivery(tenant, new)

    async def due(self, *, now: datetime) -> bool:
        """Whether any delivery is waiting for an attempt (a read: an idle worker polls without writing)."""
        row = await self._sql.one(
            "SELECT 1 FROM webhook_outbox WHERE status = 'pending' AND next_at <= ? "
            "AND (lease_until IS NULL OR lease_until <= ?) LIMIT 1",
            (now, now),
        )
        return row is not None

    async def claim(
        self, owner: str, *, now: datetime, lease_until: datetime, limit: int
    ) -> builtins.list[WebhookDelivery]:
        """Up to ``limit`` due deliveries, oldest first, leased to ``owner`` until ``lease_until``."""
        free = "status = 'pending' AND next_at <= ? AND (lease_until IS NULL OR lease_until <= ?)"
        key = self._sql.key

        async def body(tx: Tx) -> builtins.list[Row]:
            keys = [
                r[0]
                for r in await tx.all(
                    f"SELECT {key} FROM webhook_outbox WHERE {free} ORDER BY next_at, {key} LIMIT ?", (now, now, limit)
                )
            ]
            if not keys:
                return []
            return await tx.all(
                f"UPDATE webhook_outbox SET lease_owner = ?, lease_until = ? WHERE {self._sql.among(key)} AND {free} "
                f"RETURNING {_DELIVERY}",
                (owner, lease_until, self._sql.values(keys), now, now),
            )

        rows = await self._sql.write(body, fenced=False)
        return sorted((self._delivery(r) for r in rows), key=lambda d: (d.next_attempt_at or now, d.id))

    async def finish(
        self,
        delivery: WebhookDelivery,
        owner: str,
        *,
        status: DeliveryStatus,
        http_status: int | None,
        error: str | None,
        next_at: datetime | None,
        now: datetime,
    ) -> bool:
        """Record an attempt's outcome, if ``owner`` still holds the lease; whether it did."""
        changed = await self._sql.execute(
            "UPDATE webhook_outbox SET status = ?, attempts = attempts + 1, last_status = ?, last_error = ?, "
            "next_at = COALESCE(?, next_at), delivered_at = ?, lease_owner = NULL, lease_until = NULL "
            "WHERE id = ? AND lease_owner = ?",
            (
                status.value,
                http_status,
                error,
                next_at,
                now if status is DeliveryStatus.DELIVERED else None,
                delivery.id,
                owner,
            ),
            fenced=False,
        )
        return changed == 1
