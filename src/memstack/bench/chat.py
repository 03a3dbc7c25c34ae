"""Chat load on the HTTP API with the server's memory watched: ``POST /v1/chat`` from concurrent clients.

What it does, in order:

1. a temporary home (SQLite), or a fresh database on an embedded PostgreSQL (``backend="postgres"``), with one API
   key; nothing else is loaded beforehand: memories, sessions and archives are made by the traffic itself;
2. starts ``memstack serve`` on it as a **separate process** on a free loopback port (the server's defaults: local
   MiniLM embeddings, the semantic content guard, the offline responder as the chat model, the offline classifier
   and summarizer; ``server_env`` adds ``MEMSTACK_*`` settings, the caller's own are not passed on), waits for
   ``/healthz``;
3. ``clients`` closed-loop clients send chat turns for ``warmup_s + duration_s`` seconds: each picks one of ``users``
   users at random and continues one of that user's sessions (a session runs 2-12 turns, then a new one starts),
   with messages drawn from templates with random names, places, numbers and lengths (facts worth remembering,
   questions, explicit "remember that …", long pasted notes and code), so nearly every text is new to the server, as
   in real traffic. ``stream_share`` of the turns ask for server-sent events and are read to the ``done`` event;
4. meanwhile the server's resident memory (``VmRSS`` in ``/proc/<pid>/status``) is read every ``sample_s`` seconds;
   after the load, ``idle_s`` seconds with no traffic show whether memory is handed back;
5. stops the server (and PostgreSQL) and returns the figures; ``rss_slope_mb_per_min`` is the least-squares slope
   of RSS over the samples after the warm-up: near 0 when memory stays flat under constant load. A single sample
   may catch a model run's working memory (tens of MB, freed when it ends), so the RSS "after the warm-up" and "at
   the end" are medians of the minute before each point.

A request counts as an error unless it is a 200 with a complete answer (a JSON body with a reply, or a stream that
ends with ``done``). The load generator shares the machine with the server; ``load_avg`` says how busy it was.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memstack.bench._serve import (
    Backend,
    ClosedLoop,
    cpu_s,
    database,
    free_port,
    rss_mb,
    start_server,
    stop_server,
    wait_ready,
)
from memstack.bench.http import _DAYS, _FOODS, _HOBBIES, _PEOPLE, _PLACES, _SUBJECTS
from memstack.errors import ConfigError

__all__ = ["ChatBenchResult", "run"]


_ZONES = ("Europe/Lisbon", "America/Denver", "Asia/Tokyo", "Africa/Nairobi", "Australia/Hobart", "UTC")
_FILLER = (
    "The meeting ran long again and nobody took notes.",
    "I keep a list of things to try on the weekend.",
    "Last time the train was late by forty minutes.",
    "My manager wants the report by the end of the month.",
    "We tried the new place near the station and it was fine.",
    "The weather has been strange for this time of year.",
    "I should really call my grandmother more often.",
    "There is a lot going on at work this quarter.",
)


class _Messages:
    """Chat messages of every kind a user sends, nearly all distinct (numbers, names and lengths drawn at random)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._n = 0

    def __call__(self) -> str:
        rng, self._n = self._rng, self._n + 1
        c = rng.choice
        n = rng.randint(2, 99)
        kind = rng.random()
        if kind < 0.35:  # a fact about the user, what capture looks for
            return c(
                (
                    f"I'm {n} years old and I live in {c(_PLACES)} with my {c(_PEOPLE)}.",
                    f"My {c(_PEOPLE)} is allergic to {c(_FOODS)}, so we never cook it at home.",
                    f"I've been learning {c(_SUBJECTS)} for {n} months and my exam is on {c(_DAYS)}.",
                    f"I go {c(_HOBBIES)} every {c(_DAYS)} morning, usually for {n} minutes.",
                    f"I moved to {c(_PLACES)} last year and I work {n} hours a week now.",
                    f"I really don't like {c(_FOODS)} but I love {c(_FOODS)}.",
                )
            )
        if kind < 0.65:  # a question or a request
            return c(
                (
                    f"What could I cook tonight with {c(_FOODS)} and {c(_FOODS)}?",
                    f"Can you plan {n} minutes of {c(_HOBBIES)} for {c(_DAYS)}?",
                    f"How should I revise {c(_SUBJECTS)} in the {n} days before the exam?",
                    f"Any ideas for a weekend in {c(_PLACES)} with my {c(_PEOPLE)}?",
                    f"Remind me what I told you about {c(_SUBJECTS)}.",
                    "thanks!" if n % 2 else f"ok, and what about {c(_PLACES)}?",
                )
            )
        if kind < 0.75:  # an explicit save
            return f"Remember that my {c(_PEOPLE)}'s birthday is on {c(_DAYS)} the {n % 28 + 1}th."
        if kind < 0.92:  # a long pasted note
            lines = [c(_FILLER) for _ in range(rng.randint(4, 40))]
            lines.insert(rng.randrange(len(lines)), f"Note {self._n}: I'm going to {c(_PLACES)} on {c(_DAYS)}.")
            return " ".join(lines)
        body = "\n".join(f"    total += item_{i} * {rng.randint(1, 999)}" for i in range(rng.randint(3, 30)))
        return f"Why is this slow?\n```python\ndef total_{n}(items):\n    total = 0\n{body}\n    return total\n```"


@dataclass(frozen=True, slots=True)
class ChatBenchResult:
    backend: str
    clients: int
    users: int
    duration_s: float
    warmup_s: float
    requests: int
    errors: int
    rps: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    sessions: int  # sessions the clients started
    rss_start_mb: float  # the server ready, before any traffic
    rss_warm_mb: float  # at the end of the warm-up: median of its last minute (one sample may catch a model run)
    rss_end_mb: float  # at the end of the load: median of its last minute
    rss_max_mb: float
    rss_idle_mb: float | None  # after ``idle_s`` seconds without traffic
    rss_slope_mb_per_min: float  # least-squares slope after the warm-up
    rss_samples_mb: list[tuple[float, float]]  # (seconds since the load started, MB), at most 60 of them
    server_cpu_ms: float | None  # CPU time of the server process per answered turn
    load_avg: float | None  # the machine's 1-minute load average at the end
    server_env: dict[str, str]  # settings given to the server (server_env)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


class _ChatLoad(ClosedLoop):
    """Closed-loop chat clients; latencies of complete 200 answers, errors for anything else."""

    def __init__(self, port: int, secret: str, users: int, stream_share: float, seed: int) -> None:
        super().__init__(port, secret)
        self._users = users
        self._stream_share = stream_share
        self._rng = random.Random(seed)
        self._messages = _Messages(random.Random(seed + 1))
        self._idle: dict[int, list[tuple[str, int]]] = {}  # user -> sessions not in use, with turns left
        self.sessions = 0
        self.samples: list[tuple[float, float]] = []

    def _turn(self) -> tuple[int, str | None, int, bytes, bool]:
        rng = self._rng
        user = rng.randrange(self._users)
        idle = self._idle.get(user)
        if idle and rng.random() < 0.8:
            session_id, left = idle.pop(rng.randrange(len(idle)))
        else:
            session_id, left = None, rng.randint(2, 12)
            self.sessions += 1
        stream = rng.random() < self._stream_share
        payload: dict[str, Any] = {"user_id": f"user{user}", "message": self._messages(), "stream": stream}
        payload["metadata"] = {"timezone": rng.choice(_ZONES)}
        if session_id is not None:
            payload["session_id"] = session_id
        else:  # a new conversation, not the user's current session
            payload["new_session"] = True
        body = json.dumps(payload).encode()
        head = (
            f"POST /v1/chat HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n"
        ).encode()
        return user, session_id, left, head + self._auth + b"\r\n" + body, stream

    async def client(self, stop_at: float) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self._port)
        try:
            while time.perf_counter() < stop_at:
                user, session_id, left, request, stream = self._turn()
                started = time.perf_counter()
                answer: dict[str, Any] | None = None
                try:
                    writer.write(request)
                    answer = await _read_answer(reader, stream)
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", self._port)
                ok = answer is not None and isinstance(answer.get("reply"), str)
                if ok and answer is not None and left > 1:
                    self._idle.setdefault(user, []).append((str(answer["session_id"]), left - 1))
                elif not ok and session_id is not None:
                    self._idle.setdefault(user, []).append((session_id, left))
                self.count(ok, started)
        finally:
            writer.close()


async def _read_answer(reader: asyncio.StreamReader, stream: bool) -> dict[str, Any] | None:
    """The turn's result from one HTTP response (``None`` unless a 200): the JSON body, or the ``done`` event."""
    head = await reader.readuntil(b"\r\n\r\n")
    length, chunked = 0, False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
        elif name.strip().lower() == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readexactly(2)
        body = b"".join(parts)
    else:
        body = await reader.readexactly(length)
    if not head.startswith(b"HTTP/1.1 200"):
        return None
    if not stream:
        answer: dict[str, Any] = json.loads(body)
        return answer
    for event in body.split(b"\n\n"):
        if event.startswith(b"event: done\n"):
            done: dict[str, Any] = json.loads(event.split(b"data: ", 1)[1])
            return done
    return None


async def _sample(pid: int, every_s: float, into: list[tuple[float, float]], started: float) -> None:
    while True:
        mb = rss_mb(pid)
        if mb is not None:
            into.append((time.perf_counter() - started, mb))
        await asyncio.sleep(every_s)


def _slope(samples: list[tuple[float, float]]) -> float:
    """MB per minute, least squares; 0 with fewer than two samples."""
    if len(samples) < 2:
        return 0.0
    t = np.asarray([s[0] for s in samples]) / 60.0
    mb = np.asarray([s[1] for s in samples])
    if float(np.ptp(t)) == 0.0:
        return 0.0
    return float(np.polyfit(t, mb, 1)[0])


def _median(values: list[float], default: float) -> float:
    return float(np.median(values)) if values else default


def _thin(samples: list[tuple[float, float]], most: int = 60) -> list[tuple[float, float]]:
    step = max(1, -(-len(samples) // most))
    return [(round(t, 1), round(mb, 1)) for t, mb in samples[::step]]


@dataclass(frozen=True, slots=True)
class _Plan:
    clients: int
    users: int
    duration_s: float
    warmup_s: float
    idle_s: float
    stream_share: float
    sample_s: float
    seed: int
    server_env: dict[str, str]


@dataclass(frozen=True, slots=True)
class _Measured:
    load: _ChatLoad
    elapsed: float
    rss_start: float
    rss_warm: float
    rss_end: float
    rss_idle: float | None
    warm_at: float
    server_cpu_s: float | None


async def _measure(pid: int, port: int, secret: str, plan: _Plan, log: Callable[[str], None]) -> _Measured:
    load = _ChatLoad(port, secret, plan.users, plan.stream_share, plan.seed)
    started = time.perf_counter()
    rss_start = rss_mb(pid) or 0.0
    sampler = asyncio.create_task(_sample(pid, plan.sample_s, load.samples, started))
    try:
        if plan.warmup_s > 0:
            await load.run(plan.clients, plan.warmup_s)
        warm_at = time.perf_counter() - started
        rss_warm = rss_mb(pid) or 0.0
        log(f"warm-up done: RSS {rss_start:.0f} MB at the start, {rss_warm:.0f} MB now; measuring")
        load.record = True
        cpu0 = cpu_s(pid)
        elapsed = await load.run(plan.clients, plan.duration_s)
        cpu1 = cpu_s(pid)
        load.record = False
        rss_end = rss_mb(pid) or 0.0
        rss_idle = None
        if plan.idle_s > 0:
            log(f"load done: RSS {rss_end:.0f} MB; {plan.idle_s:g} s idle")
            await asyncio.sleep(plan.idle_s)
            rss_idle = rss_mb(pid)
    finally:
        sampler.cancel()
        await asyncio.gather(sampler, return_exceptions=True)
    server_cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    return _Measured(load, elapsed, rss_start, rss_warm, rss_end, rss_idle, warm_at, server_cpu)


async def _make_key(home: Path, database_url: str | None) -> str:
    from memstack.engine import AsyncMemstack

    async with AsyncMemstack(home=home, database_url=database_url, resume=False) as ms:
        _, secret = await ms.store.keys.create("bench", name="chat bench")
    return secret


def run(
    *,
    backend: Backend = "sqlite",
    clients: int = 16,
    duration_s: float = 120.0,
    warmup_s: float = 60.0,
    idle_s: float = 10.0,
    users: int = 300,
    stream_share: float = 0.25,
    sample_s: float = 1.0,
    seed: int = 1,
    server_env: Mapping[str, str] | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> ChatBenchResult:
    """Run the chat load (see the module docstring) and return its figures."""
    if clients < 1 or users < 1 or duration_s <= 0 or warmup_s < 0 or idle_s < 0 or sample_s <= 0:
        raise ConfigError("clients and users must be ≥ 1, duration_s and sample_s > 0, warmup_s and idle_s ≥ 0")
    if not 0 <= stream_share <= 1:
        raise ConfigError(f"stream_share is a fraction of the turns, 0 to 1; got {stream_share}")
    if backend not in ("sqlite", "postgres"):
        raise ConfigError(f"unknown backend {backend!r}; use sqlite or postgres")
    env = dict(server_env or {})
    if any(not key.startswith("MEMSTACK_") for key in env):
        raise ConfigError(f"server settings are MEMSTACK_* variables, got {sorted(env)}")
    plan = _Plan(clients, users, duration_s, warmup_s, idle_s, stream_share, sample_s, seed, env)
    with tempfile.TemporaryDirectory(prefix="memstack-chat-bench-") as tmp, database(backend, log) as url:
        home = Path(tmp)
        secret = asyncio.run(_make_key(home, url))
        port = free_port()
        server = start_server(home, port, database_url=url, env=plan.server_env)
        try:
            log(f"server process {server.pid} on 127.0.0.1:{port} ({backend}); {clients} clients, {users} users")
            log(f"warm-up {warmup_s:g} s, then {duration_s:g} s measured, then {idle_s:g} s idle")
            measured = _run_loop(port, server, secret, plan, log)
        finally:
            stop_server(server)
    return _result(backend, plan, measured)


def _result(backend: Backend, plan: _Plan, m: _Measured) -> ChatBenchResult:
    load = m.load
    latencies = load.latencies
    ms = np.asarray(latencies) * 1000.0 if latencies else np.asarray([float("nan")])
    end_at = m.warm_at + m.elapsed
    after = [s for s in load.samples if m.warm_at <= s[0] <= end_at]
    peak = max((mb for _, mb in load.samples), default=m.rss_end)
    warm = _median([mb for t, mb in load.samples if m.warm_at - 60 <= t <= m.warm_at], m.rss_warm)
    end = _median([mb for t, mb in after if t >= end_at - 60], m.rss_end)
    return ChatBenchResult(
        backend=backend,
        clients=plan.clients,
        users=plan.users,
        duration_s=round(m.elapsed, 2),
        warmup_s=plan.warmup_s,
        requests=len(latencies) + load.errors,
        errors=load.errors,
        rps=round(len(latencies) / m.elapsed, 2),
        p50_ms=round(float(np.percentile(ms, 50)), 1),
        p95_ms=round(float(np.percentile(ms, 95)), 1),
        p99_ms=round(float(np.percentile(ms, 99)), 1),
        sessions=load.sessions,
        rss_start_mb=round(m.rss_start, 1),
        rss_warm_mb=round(warm, 1),
        rss_end_mb=round(end, 1),
        rss_max_mb=round(max(peak, m.rss_end), 1),
        rss_idle_mb=None if m.rss_idle is None else round(m.rss_idle, 1),
        rss_slope_mb_per_min=round(_slope(after), 2),
        rss_samples_mb=_thin(load.samples),
        server_cpu_ms=None if m.server_cpu_s is None else round(m.server_cpu_s * 1000 / max(len(latencies), 1), 2),
        load_avg=round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        server_env=plan.server_env,
    )


def _run_loop(port: int, server: Any, secret: str, plan: _Plan, log: Callable[[str], None]) -> _Measured:
    async def main() -> _Measured:
        await wait_ready(port, server)
        return await _measure(server.pid, port, secret, plan, log)

    return asyncio.run(main())
