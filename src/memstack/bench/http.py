"""Load test of the HTTP API: ``POST /v1/users/{u}/memories/search`` at N concurrent clients, over loopback.

What it does, in order:

1. builds a data set in a temporary home (SQLite), or in a fresh database on an embedded PostgreSQL
   (``backend="postgres"``): ``users`` users × ``per_user`` memories (real sentences, embedded with the server's
   model) and one API key;
2. starts ``memstack serve`` on it as a **separate process** (``workers`` worker processes behind one port,
   PostgreSQL only past one) on a free loopback port, waits for ``/healthz``;
3. **cold**: searches once for each user, one request at a time, each with a query text of its own: the first
   search of every user after the server started, with nothing in its caches (the user's vectors are read from the
   store, the query is embedded), as ``cold_p50_ms`` / ``cold_p99_ms`` (``cold_first_ms``: the server's very first
   search); then the same searches again, one at a time, now answered from the caches: ``repeat_p50_ms`` /
   ``repeat_p99_ms``, the warm figure to set beside the cold one (the closed-loop figures below queue 50 clients
   on the cores). ``cold_errors`` counts the failed ones of both passes. On PostgreSQL the database was just
   written, so its buffers and the OS page cache are warm all the same;
4. warms up for ``warmup_s`` (not counted): every user's vectors get loaded, the query cache fills;
5. runs ``clients`` closed-loop clients for ``duration_s``: each sends a search, waits for the whole answer, sends the
   next (HTTP/1.1 keep-alive, one connection per client). A request counts as an error unless it is a 200 with a
   complete body; ``p50_ms`` / ``p99_ms`` are the warm figures;
6. stops the server and prints one JSON line, with the machine's load average (``load_avg``).

The limit, measured in the same run while the data set is built (before the server starts, so nothing competes):
the server's own embedding model, beneath any queue, embedding texts shaped like the unique queries in batches of
``clients`` texts (at most 64, the server's largest batch), as a server whose clients all wait on a fresh embedding
would batch them: ``limit_embed_per_s`` (texts per second) and ``limit_batch_ms`` (one batch, median of eight).
``rps_over_limit`` is ``rps`` over it: with ``queries=0`` every request needs its own embedding, so it says how
close the server comes to the model (the goal is 0.85, with ``p99_ms`` at most twice ``limit_batch_ms``); with a
pool of repeated queries most requests are answered from the cache and the ratio can pass 1.

Queries: ``queries`` distinct texts, drawn uniformly at random (so with the server's query cache of 4,096 entries a
pool of a few hundred is answered from the cache after the warm-up, as a UI's repeated searches are). ``queries=0``
makes every request's text unique: every search then pays for a fresh embedding, the worst case.

The load generator is a minimal asyncio HTTP/1.1 client (no httpx), so that on a small machine most of the CPU goes
to the server being measured; it shares the machine with the server all the same, and its own cost is in the figures.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from memstack.bench._measure import ratio, raw_embedder
from memstack.bench._serve import Backend, ClosedLoop, cpu_s, database, free_port, start_server, stop_server, wait_ready
from memstack.errors import ConfigError

__all__ = ["HttpBenchResult", "run"]

_FOODS = ("spicy ramen", "dark chocolate", "green tea", "sourdough bread", "oat milk", "grilled fish", "mango", "tofu")
_PLACES = ("Lyon", "Leeds", "Osaka", "Porto", "Denver", "Nairobi", "Tallinn", "Quito", "Hobart", "Bergen")
_SUBJECTS = ("organic chemistry", "the MCAT", "Spanish", "linear algebra", "jazz piano", "Rust", "statistics", "law")
_PEOPLE = ("sister", "brother", "mother", "father", "best friend", "partner", "daughter", "son", "grandmother")
_HOBBIES = ("trail running", "chess", "pottery", "rock climbing", "birdwatching", "baking", "cycling", "knitting")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _memory_texts(rng: random.Random, n: int) -> list[str]:
    makers: list[Callable[[], str]] = [
        lambda: f"User loves {rng.choice(_FOODS)} but avoids {rng.choice(_FOODS)}",
        lambda: f"User's {rng.choice(_PEOPLE)} lives in {rng.choice(_PLACES)}",
        lambda: f"User is studying {rng.choice(_SUBJECTS)} and has an exam on {rng.choice(_DAYS)}",
        lambda: f"User goes {rng.choice(_HOBBIES)} every {rng.choice(_DAYS)} morning",
        lambda: f"User moved to {rng.choice(_PLACES)} to learn {rng.choice(_SUBJECTS)}",
        lambda: f"User prefers short answers about {rng.choice(_SUBJECTS)} with examples",
        lambda: f"User's {rng.choice(_PEOPLE)} is allergic to {rng.choice(_FOODS)}",
    ]
    return [rng.choice(makers)() for _ in range(n)]


def _query_texts(rng: random.Random, n: int) -> list[str]:
    makers: list[Callable[[], str]] = [
        lambda: f"does the user like {rng.choice(_FOODS)} or {rng.choice(_FOODS)}?",
        lambda: f"where does the user's {rng.choice(_PEOPLE)} live, {rng.choice(_PLACES)}?",
        lambda: f"when is the {rng.choice(_SUBJECTS)} exam, {rng.choice(_DAYS)}?",
        lambda: f"hobbies like {rng.choice(_HOBBIES)} on {rng.choice(_DAYS)}",
        lambda: f"anything about {rng.choice(_PLACES)} and {rng.choice(_SUBJECTS)}",
        lambda: f"is the {rng.choice(_PEOPLE)} allergic to {rng.choice(_FOODS)}",
    ]
    seen: dict[str, None] = {}
    attempts = 0
    while len(seen) < n:
        attempts += 1
        text = rng.choice(makers)()
        # The templates make about two thousand texts; past that (or when they repeat a lot) number them.
        seen[text if attempts < 20 * n else f"{text} ({attempts})"] = None
    return list(seen)


@dataclass(frozen=True, slots=True)
class HttpBenchResult:
    endpoint: str
    backend: str
    workers: int
    clients: int
    duration_s: float
    requests: int
    errors: int
    rps: float
    p50_ms: float
    p99_ms: float
    users: int
    per_user: int
    k: int
    distinct_queries: int | str
    server_cpu_ms: float | None  # CPU time the server process spent per answered request (user + system)
    client_cpu_ms: float  # CPU time this load generator spent per request
    load_avg: float | None  # the machine's 1-minute load average at the end (other work competing for the cores)
    cold_requests: int  # one first search per user, one at a time, right after the server started
    cold_errors: int
    cold_first_ms: float | None
    cold_p50_ms: float
    cold_p99_ms: float
    repeat_p50_ms: float  # the same searches again, one at a time: from the caches
    repeat_p99_ms: float
    limit_embed_per_s: float  # the model alone, batched as the server would batch unique queries
    limit_batch_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "backend": self.backend,
            "workers": self.workers,
            "clients": self.clients,
            "duration_s": self.duration_s,
            "requests": self.requests,
            "errors": self.errors,
            "rps": self.rps,
            "p50_ms": self.p50_ms,
            "p99_ms": self.p99_ms,
            "users": self.users,
            "per_user": self.per_user,
            "k": self.k,
            "distinct_queries": self.distinct_queries,
            "server_cpu_ms": self.server_cpu_ms,
            "client_cpu_ms": self.client_cpu_ms,
            "load_avg": self.load_avg,
            "cold_requests": self.cold_requests,
            "cold_errors": self.cold_errors,
            "cold_first_ms": self.cold_first_ms,
            "cold_p50_ms": self.cold_p50_ms,
            "cold_p99_ms": self.cold_p99_ms,
            "repeat_p50_ms": self.repeat_p50_ms,
            "repeat_p99_ms": self.repeat_p99_ms,
            "limit_embed_per_s": self.limit_embed_per_s,
            "limit_batch_ms": self.limit_batch_ms,
            "rps_over_limit": ratio(self.rps, self.limit_embed_per_s),
        }


async def _populate(
    home: Path, url: str | None, users: int, per_user: int, seed: int, batch: int, log: Callable[[str], None]
) -> tuple[str, float, float]:
    from memstack.engine import AsyncMemstack
    from memstack.types import Category, NewMemory, Source, UserRef

    rng = random.Random(seed)
    async with AsyncMemstack(home=home, database_url=url, resume=False) as ms:
        pool = sorted(set(_memory_texts(rng, max(per_user * 3, 600))))
        log(f"embedding {len(pool)} distinct memory texts")
        vectors = await ms.embedder.embed(pool)
        categories = list(Category)
        for u in range(users):
            picks = [rng.randrange(len(pool)) for _ in range(per_user)]
            news = [NewMemory(pool[i], categories[i % len(categories)], Source.MANUAL) for i in picks]
            await ms.store.memories.add_many(UserRef(f"user{u}", "bench"), news, np.asarray(vectors[picks]))
        _, secret = await ms.store.keys.create("bench", name="http bench")
        per_s, batch_ms = await _embed_limit(ms.embedder, batch, rng)
    return secret, per_s, batch_ms


async def _embed_limit(embedder: Any, batch: int, rng: random.Random) -> tuple[float, float]:
    """The model alone on texts shaped like the unique queries, ``batch`` a call, eight calls after one untimed:
    (texts per second, the median call in milliseconds)."""
    raw = raw_embedder(embedder)
    made = iter(range(1, 1_000_000))
    calls = [[f"{rng.choice(_FOODS)} or {rng.choice(_PLACES)} #{next(made)}" for _ in range(batch)] for _ in range(9)]
    await raw.embed(calls[0])
    took = []
    for texts in calls[1:]:
        started = time.perf_counter()
        await raw.embed(texts)
        took.append(time.perf_counter() - started)
    return round(batch * len(took) / sum(took), 1), round(float(np.median(took)) * 1000, 2)


class _Load(ClosedLoop):
    """Closed-loop clients; latencies of complete 200 answers, errors for anything else."""

    def __init__(self, port: int, secret: str, users: int, k: int, queries: list[str], seed: int) -> None:
        super().__init__(port, secret)
        self._users = users
        self._k = k
        self._queries = queries
        self._rng = random.Random(seed)
        self._unique = 0

    def _request(self) -> bytes:
        if self._queries:
            query = self._rng.choice(self._queries)
        else:
            self._unique += 1
            query = f"{self._rng.choice(_FOODS)} or {self._rng.choice(_PLACES)} #{self._unique}"
        return self._search(self._rng.randrange(self._users), query)

    def _search(self, user: int, query: str) -> bytes:
        body = json.dumps({"query": query, "k": self._k}).encode()
        head = (
            f"POST /v1/users/user{user}/memories/search HTTP/1.1\r\nHost: bench\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        ).encode()
        return head + self._auth + b"\r\n" + body

    async def client(self, stop_at: float) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self._port)
        try:
            while time.perf_counter() < stop_at:
                request = self._request()
                started = time.perf_counter()
                ok = await _exchange(reader, writer, request)
                if not ok and writer.is_closing():
                    reader, writer = await asyncio.open_connection("127.0.0.1", self._port)
                self.count(ok, started)
        finally:
            writer.close()

    async def one_at_a_time(self) -> tuple[list[float], int]:
        """One search per user, one at a time on one connection, each user's query text its own (the same on every
        call): (seconds per good answer in user order, errors)."""
        took: list[float] = []
        errors = 0
        reader, writer = await asyncio.open_connection("127.0.0.1", self._port)
        try:
            for user in range(self._users):
                food, place = _FOODS[user % len(_FOODS)], _PLACES[user % len(_PLACES)]
                query = f"first search of user {user}: {food} in {place}?"
                request = self._search(user, query)
                started = time.perf_counter()
                ok = await _exchange(reader, writer, request)
                if ok:
                    took.append(time.perf_counter() - started)
                else:
                    errors += 1
                    if writer.is_closing():
                        reader, writer = await asyncio.open_connection("127.0.0.1", self._port)
        finally:
            writer.close()
        return took, errors


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> bool:
    """Send one search and read its whole answer: true for a 200 with results. On a broken connection the writer
    is closed (the caller opens another)."""
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        body = await reader.readexactly(length)
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
        writer.close()
        return False
    return head.startswith(b"HTTP/1.1 200") and body.startswith(b'{"results":')


@dataclass(frozen=True, slots=True)
class _Measured:
    latencies: list[float]
    errors: int
    elapsed: float
    server_cpu_s: float | None
    client_cpu_s: float
    cold: list[float]
    repeat: list[float]
    cold_errors: int


async def _measure(
    server: int,
    port: int,
    secret: str,
    users: int,
    k: int,
    queries: list[str],
    clients: int,
    duration_s: float,
    warmup_s: float,
) -> _Measured:
    load = _Load(port, secret, users, k, queries, seed=7)
    cold, cold_errors = await load.one_at_a_time()
    repeat, repeat_errors = await load.one_at_a_time()
    if warmup_s > 0:
        await load.run(clients, warmup_s)
    load.record = True
    cpu0, own0 = cpu_s(server), time.process_time()
    elapsed = await load.run(clients, duration_s)
    cpu1, own1 = cpu_s(server), time.process_time()
    server_cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    return _Measured(
        load.latencies, load.errors, elapsed, server_cpu, own1 - own0, cold, repeat, cold_errors + repeat_errors
    )


def run(
    *,
    backend: Backend = "sqlite",
    workers: int = 1,
    clients: int = 50,
    duration_s: float = 30.0,
    warmup_s: float = 5.0,
    users: int = 100,
    per_user: int = 200,
    k: int = 10,
    queries: int = 500,
    seed: int = 1,
    log: Callable[[str], None] = lambda _: None,
) -> HttpBenchResult:
    """Run the load test (see the module docstring) and return its figures."""
    if clients < 1 or duration_s <= 0 or users < 1 or per_user < 1 or k < 1 or queries < 0:
        raise ConfigError("clients, users, per_user and k must be ≥ 1, duration_s > 0 and queries ≥ 0")
    if workers < 1 or (workers > 1 and backend != "postgres"):
        raise ConfigError(f"workers must be ≥ 1, and more than one needs backend='postgres' (got {workers})")
    with tempfile.TemporaryDirectory(prefix="memstack-http-bench-") as tmp, database(backend, log) as url:
        home = Path(tmp)
        log(f"building {users} users × {per_user} memories ({backend})")
        secret, limit, batch_ms = asyncio.run(_populate(home, url, users, per_user, seed, min(clients, 64), log))
        pool = _query_texts(random.Random(seed + 1), queries) if queries else []
        port = free_port()
        server = start_server(home, port, database_url=url, workers=workers)
        try:
            log(f"server process {server.pid} ({workers} workers) on 127.0.0.1:{port}")
            log(f"warm-up {warmup_s:g} s, then {duration_s:g} s measured")
            measured = _run_loop(port, server, secret, users, k, pool, clients, duration_s, warmup_s)
        finally:
            stop_server(server)
    latencies, errors, elapsed = measured.latencies, measured.errors, measured.elapsed
    answered = max(len(latencies), 1)
    ms = np.asarray(latencies) * 1000.0 if latencies else np.asarray([float("nan")])
    cold_ms = np.asarray(measured.cold) * 1000.0 if measured.cold else np.asarray([float("nan")])
    repeat_ms = np.asarray(measured.repeat) * 1000.0 if measured.repeat else np.asarray([float("nan")])
    return HttpBenchResult(
        endpoint="POST /v1/users/{user_id}/memories/search",
        backend=backend,
        workers=workers,
        clients=clients,
        duration_s=round(elapsed, 2),
        requests=len(latencies) + errors,
        errors=errors,
        rps=round(len(latencies) / elapsed, 1),
        p50_ms=round(float(np.percentile(ms, 50)), 2),
        p99_ms=round(float(np.percentile(ms, 99)), 2),
        users=users,
        per_user=per_user,
        k=k,
        distinct_queries=queries if queries else "all",
        server_cpu_ms=None if measured.server_cpu_s is None else round(measured.server_cpu_s * 1000 / answered, 3),
        client_cpu_ms=round(measured.client_cpu_s * 1000 / answered, 3),
        load_avg=round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        cold_requests=users,
        cold_errors=measured.cold_errors,
        cold_first_ms=round(float(cold_ms[0]), 2) if measured.cold else None,
        cold_p50_ms=round(float(np.percentile(cold_ms, 50)), 2),
        cold_p99_ms=round(float(np.percentile(cold_ms, 99)), 2),
        repeat_p50_ms=round(float(np.percentile(repeat_ms, 50)), 2),
        repeat_p99_ms=round(float(np.percentile(repeat_ms, 99)), 2),
        limit_embed_per_s=limit,
        limit_batch_ms=batch_ms,
    )


def _run_loop(
    port: int,
    server: subprocess.Popen[bytes],
    secret: str,
    users: int,
    k: int,
    pool: list[str],
    clients: int,
    duration_s: float,
    warmup_s: float,
) -> _Measured:
    async def main() -> _Measured:
        await wait_ready(port, server)
        return await _measure(server.pid, port, secret, users, k, pool, clients, duration_s, warmup_s)

    try:
        import uvloop

        return uvloop.run(main())
    except ImportError:  # pragma: no cover - uvloop is a dependency except on Windows
        return asyncio.run(main())


def add_bench(main: Any) -> None:
    """Register ``memstack bench http`` on the ``bench`` group, creating the group when no other module has yet."""
    import click

    @click.command("http")
    @click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
    @click.option(
        "--workers",
        default=1,
        show_default=True,
        type=click.IntRange(1, 64),
        help="Server worker processes (memstack serve --workers; PostgreSQL only past one).",
    )
    @click.option("--clients", default=50, show_default=True, type=click.IntRange(1, 1000))
    @click.option("--duration", "duration_s", default=30.0, show_default=True, type=click.FloatRange(0.5, 3600))
    @click.option("--warmup", "warmup_s", default=5.0, show_default=True, type=click.FloatRange(0, 600))
    @click.option("--users", default=100, show_default=True, type=click.IntRange(1, 100_000))
    @click.option("--per-user", default=200, show_default=True, type=click.IntRange(1, 100_000))
    @click.option("-k", "k", default=10, show_default=True, type=click.IntRange(1, 100))
    @click.option(
        "--queries",
        default=500,
        show_default=True,
        type=click.IntRange(0, 100_000),
        help="Distinct query texts drawn at random; 0: every query unique (no cache hits).",
    )
    @click.option("--json", "as_json", is_flag=True, help="End with one JSON line (the figures).")
    def bench_http(
        backend: str,
        workers: int,
        clients: int,
        duration_s: float,
        warmup_s: float,
        users: int,
        per_user: int,
        k: int,
        queries: int,
        as_json: bool,
    ) -> None:
        """Load-test memory search over HTTP (a separate server process, loopback; PostgreSQL is an embedded
        server)."""
        from memstack.errors import MemstackError

        def log(line: str) -> None:
            click.echo(line, err=True)

        try:
            result = run(
                backend=cast(Backend, backend),
                workers=workers,
                clients=clients,
                duration_s=duration_s,
                warmup_s=warmup_s,
                users=users,
                per_user=per_user,
                k=k,
                queries=queries,
                log=log,
            )
        except MemstackError as exc:
            raise click.ClickException(str(exc)) from None
        click.echo(
            f"{backend}, {workers} worker(s): {result.requests} requests in {result.duration_s} s at {clients} "
            f"clients: {result.rps} req/s, "
            f"p50 {result.p50_ms} ms, p99 {result.p99_ms} ms, {result.errors} errors; first search of each of "
            f"{result.cold_requests} users, one at a time: p50 {result.cold_p50_ms} ms, p99 {result.cold_p99_ms} ms "
            f"(again: p50 {result.repeat_p50_ms} ms, p99 {result.repeat_p99_ms} ms); CPU per request: "
            f"server {result.server_cpu_ms} ms, load generator {result.client_cpu_ms} ms; "
            f"load average {result.load_avg} on {os.cpu_count()} cores",
            err=as_json,
        )
        if as_json:
            click.echo(json.dumps(result.to_json()))

    bench = main.commands.get("bench")
    if not isinstance(bench, click.Group):
        bench = click.Group("bench", help="Measuring commands; each prints one JSON object as its last line.")
        main.add_command(bench)
    bench.add_command(bench_http)
