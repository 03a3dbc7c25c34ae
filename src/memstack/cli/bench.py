"""``memstack bench …``: benchmarks whose figures the README quotes (``--json``: the last line is one JSON object)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Literal, cast

import click

from memstack.cli._common import echo_json
from memstack.errors import MemstackError

__all__ = ["bench"]


@click.group()
def bench() -> None:
    """Measure memstack on this machine."""


@bench.command("retrieval")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option("--users", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--per-user", type=click.IntRange(min=1), default=500, show_default=True)
@click.option("--queries", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--k", "k", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--dim", type=click.IntRange(min=1), default=384, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--pg-codec",
    type=click.Choice(["binary", "text"]),
    default=None,
    help="PostgreSQL: send query vectors with pgvector's binary codec or as '[…]'::vector text (default: binary).",
)
@click.option(
    "--cache-mb",
    type=click.IntRange(min=1),
    default=None,
    help="SQLite: the vector cache budget in MB (default: room for every user, a warm cache).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def retrieval(
    backend: str,
    users: int,
    per_user: int,
    queries: int,
    k: int,
    dim: int,
    seed: int,
    pg_codec: str | None,
    cache_mb: int | None,
    as_json: bool,
) -> None:
    """Top-k latency and recall of the store's vector search, against exact numpy on the same vectors.

    Loads USERS x PER_USER synthetic clustered unit vectors through the store's add_many (one call per user), opens
    the store again (caches empty), times each queried user's first search (cold_p50_ms, cold_p99_ms), then times
    QUERIES top-K searches, each for a random user, every one of them already searched once (p50_ms, p99_ms: warm,
    steady-state latency). For postgres an embedded server is started (shared_buffers 2GB) unless
    MEMSTACK_DATABASE_URL names one; the run then writes under a tenant of its own, so use a scratch database."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memstack.bench.retrieval import RetrievalConfig, run_retrieval

    err = Console(stderr=True)
    try:
        cfg = RetrievalConfig(
            backend=cast(Literal["sqlite", "postgres"], backend),
            users=users,
            per_user=per_user,
            queries=queries,
            k=k,
            dim=dim,
            seed=seed,
            pg_codec=cast(Literal["binary", "text"] | None, pg_codec),
            cache_mb=cache_mb,
        )
        url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if backend == "postgres" else None
        columns = (TextColumn("loading {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task("", total=users * per_user)
            result = asyncio.run(
                run_retrieval(
                    cfg, database_url=url, progress=lambda n, what: bar.update(task, advance=n, description=what)
                )
            )
    except MemstackError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")  # a message may hold [brackets]: not markup
        raise SystemExit(1) from None
    line = result.as_json()
    if as_json:
        echo_json(line)
        return
    for key, value in line.items():
        click.echo(f"{key:>14}  {value}")


@bench.command("sessions")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="postgres", show_default=True)
@click.option("--sessions", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--turns", type=click.IntRange(min=1), default=2, show_default=True, help="Turns per session.")
@click.option("--model-delay", type=click.FloatRange(min=0), default=10.0, show_default=True, help="Seconds.")
@click.option("--pool", type=click.IntRange(min=1), default=20, show_default=True, help="PostgreSQL connections.")
@click.option("--guard", type=click.Choice(["rules", "auto"]), default="rules", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def sessions(backend: str, sessions: int, turns: int, model_delay: float, pool: int, guard: str, as_json: bool) -> None:
    """Many concurrent chat sessions whose model is slow, in one process (see memstack.bench.sessions).

    SESSIONS sessions of one tenant each play TURNS turns in order at once, against a scripted model over HTTP that
    answers after MODEL_DELAY seconds, while another tenant chats; checks errors and per-session order. PostgreSQL
    is an embedded server unless MEMSTACK_DATABASE_URL names one (use a scratch database)."""
    from memstack.bench.sessions import SessionsBenchConfig, run_sessions_bench

    cfg = SessionsBenchConfig(
        backend=cast(Literal["sqlite", "postgres"], backend),
        sessions=sessions,
        turns=turns,
        model_delay_s=model_delay,
        pool=pool,
        guard=guard,
    )
    url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if backend == "postgres" else None
    try:
        result = asyncio.run(run_sessions_bench(cfg, database_url=url))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key:>24}  {value}")


@bench.command("session-memory")
@click.option("--data", type=click.Path(path_type=Path), required=True, help="LoCoMo-format JSON.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N conversations.")
@click.option(
    "--store",
    type=click.Choice(["sqlite", "postgres"]),
    default=None,
    help="Through the session service on a fresh store (postgres: an embedded server unless MEMSTACK_DATABASE_URL "
    "names a scratch database).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def session_memory(data: Path, limit: int | None, store: str | None, as_json: bool) -> None:
    """The offline session pipeline on LoCoMo conversations (see memstack.bench.session_memory).

    Each LoCoMo session is replayed as a memstack session, one exchange per (speaker A, speaker B) pair: routes,
    phase-2 time per turn, base-truth size and how much of LoCoMo's gold observations the memory covers. With
    --store, the same exchanges through the session service on a fresh store: begin/finish time per turn and
    full-text search time."""
    from memstack.bench.session_memory import run_bench, run_service_bench

    try:
        if store is None:
            result = asyncio.run(run_bench(data, limit=limit))
        else:
            url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if store == "postgres" else None
            result = asyncio.run(run_service_bench(data, backend=store, database_url=url, limit=limit))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key:>32}  {value}")


@bench.command("plans")
@click.option("--users", type=click.IntRange(min=0), default=200, show_default=True, help="Seeded users.")
@click.option("--per-user", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--top", type=click.IntRange(min=1), default=25, show_default=True, help="Statements shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def plans(users: int, per_user: int, top: int, as_json: bool) -> None:
    """The statements a real workload sends to PostgreSQL: calls, mean time, whether each names the user, and its
    plan (see memstack.bench.plans). An embedded server unless MEMSTACK_DATABASE_URL names one that preloads
    pg_stat_statements (use a scratch database)."""
    from memstack.bench.plans import PlansConfig, run_plans

    url = os.environ.get("MEMSTACK_DATABASE_URL") or None
    try:
        result = asyncio.run(run_plans(PlansConfig(users=users, per_user=per_user, top=top), database_url=url))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    for s in result["statements"]:
        scope = "one user" if s["scoped"] else "ALL USERS"
        click.echo(f"-- {s['calls']} calls, {s['mean_ms']} ms mean, {scope}\n{s['query']}\n{s['plan']}\n")
    click.echo(f"statements on user data that do not name the user: {result['unscoped']}")


@bench.command("startup")
@click.option("--runs", type=click.IntRange(min=1), default=7, show_default=True, help="Whole-process runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def startup(runs: int, as_json: bool) -> None:
    """How long `memstack --help` takes as a whole process (median of RUNS), and the heavy modules it imports
    (none expected; see memstack.bench.startup)."""
    from memstack.bench.startup import measure_startup

    result = measure_startup(runs)
    if as_json:
        echo_json(result)
        return
    heavy = ", ".join(result["heavy_imports"]) or "none"
    click.echo(
        f"memstack --help: median {result['median_ms']} ms of {runs} runs (fastest {result['min_ms']} ms, "
        f"slowest {result['max_ms']} ms); heavy modules imported: {heavy}"
    )


@bench.command("erase")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option("--memories", type=click.IntRange(min=0), default=1000, show_default=True, help="Of the erased user.")
@click.option("--turns", type=click.IntRange(min=0), default=50, show_default=True, help="Of the erased user.")
@click.option("--others", type=click.IntRange(min=0), default=200, show_default=True, help="Other users.")
@click.option("--per-other", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--runs", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def erase(backend: str, memories: int, turns: int, others: int, per_other: int, runs: int, as_json: bool) -> None:
    """How long erasing a user takes (see memstack.bench.erase): the median of RUNS erasures, each of a fresh
    user, beside OTHERS users. PostgreSQL: an embedded server unless MEMSTACK_DATABASE_URL names one."""
    from memstack.bench.erase import EraseConfig, run_erase

    url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if backend == "postgres" else None
    cfg = EraseConfig(backend, memories, turns, others, per_other, runs)
    try:
        result = asyncio.run(run_erase(cfg, database_url=url))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key:>10}  {value}")


@bench.command("ingest")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option("--conversations", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--sessions", type=click.IntRange(min=1), default=None, help="Only the first N sessions of each.")
@click.option("--data", type=click.Path(path_type=Path), default=None, help="A LoCoMo file (default: synthetic).")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model.")
@click.option("--seed", type=int, default=0, show_default=True, help="Of the synthetic conversations.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def ingest(
    backend: str,
    conversations: int,
    sessions: int | None,
    data: Path | None,
    embedder: str,
    seed: int,
    as_json: bool,
) -> None:
    """Importing LoCoMo-sized conversations with offline memory capture: turns/s and memories/s beside the
    embedder's own throughput on the same texts (see memstack.bench.ingest). PostgreSQL: an embedded server unless
    MEMSTACK_DATABASE_URL names one (use a scratch database)."""
    import logging

    from memstack.bench.ingest import IngestBenchConfig, run_ingest_bench

    logging.getLogger("memstack").setLevel(logging.ERROR)
    url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if backend == "postgres" else None
    try:
        cfg = IngestBenchConfig(backend, conversations, embedder, seed, data, sessions)
        result = asyncio.run(run_ingest_bench(cfg, database_url=url))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key:>24}  {value}")


@bench.command("freshness")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option("--samples", type=click.IntRange(min=1), default=50, show_default=True, help="Memories timed.")
@click.option("--users", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--memories", type=click.IntRange(min=0), default=100, show_default=True, help="Each user holds.")
@click.option("--embedder", default="local:minilm", show_default=True, help="Embedding model.")
@click.option("--poll-ms", type=click.FloatRange(min=0), default=1.0, show_default=True, help="Between searches.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object on the last line.")
def freshness(
    backend: str, samples: int, users: int, memories: int, embedder: str, poll_ms: float, as_json: bool
) -> None:
    """How soon a memory captured in a chat turn is found by another engine on the same store: written ->
    searchable p50/p95, beside one search's own time (see memstack.bench.freshness). PostgreSQL: an embedded server
    unless MEMSTACK_DATABASE_URL names one (use a scratch database)."""
    import logging

    from memstack.bench.freshness import FreshnessConfig, run_freshness_bench

    logging.getLogger("memstack").setLevel(logging.ERROR)
    url = (os.environ.get("MEMSTACK_DATABASE_URL") or None) if backend == "postgres" else None
    try:
        cfg = FreshnessConfig(backend, samples, users, memories, embedder, poll_ms=poll_ms)
        result = asyncio.run(run_freshness_bench(cfg, database_url=url))
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        echo_json(result)
        return
    for key, value in result.items():
        click.echo(f"{key:>20}  {value}")


@bench.command("chat")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True)
@click.option("--clients", default=16, show_default=True, type=click.IntRange(1, 1000))
@click.option("--duration", "duration_s", default=120.0, show_default=True, type=click.FloatRange(0.5, 24 * 3600))
@click.option("--warmup", "warmup_s", default=60.0, show_default=True, type=click.FloatRange(0, 3600))
@click.option("--idle", "idle_s", default=10.0, show_default=True, type=click.FloatRange(0, 3600))
@click.option("--users", default=300, show_default=True, type=click.IntRange(1, 1_000_000))
@click.option("--stream-share", default=0.25, show_default=True, type=click.FloatRange(0, 1))
@click.option("--seed", default=1, show_default=True, type=int)
@click.option(
    "--server-env",
    multiple=True,
    metavar="MEMSTACK_NAME=VALUE",
    help="A setting for the server process (repeatable), e.g. MEMSTACK_RECALL_CACHE_MESSAGES=1000.",
)
@click.option("--json", "as_json", is_flag=True, help="End with one JSON line (the figures).")
def chat(
    backend: str,
    clients: int,
    duration_s: float,
    warmup_s: float,
    idle_s: float,
    users: int,
    stream_share: float,
    seed: int,
    server_env: tuple[str, ...],
    as_json: bool,
) -> None:
    """Chat load over HTTP with the server's memory (RSS) sampled throughout.

    Starts `memstack serve` as a separate process (SQLite in a temporary home, or a fresh database on an embedded
    PostgreSQL), sends POST /v1/chat from CLIENTS closed-loop clients for USERS users and their sessions (varied,
    mostly new messages; a share streamed) for the warm-up and then DURATION seconds, then waits IDLE seconds without
    traffic. Reports RSS at the start, at the end of the warm-up, at the end, its maximum, after the idle wait and its
    slope after the warm-up (MB/min), with requests, errors and latency percentiles."""
    from memstack.bench.chat import run

    def log(line: str) -> None:
        click.echo(line, err=True)

    try:
        result = run(
            backend=cast(Literal["sqlite", "postgres"], backend),
            clients=clients,
            duration_s=duration_s,
            warmup_s=warmup_s,
            idle_s=idle_s,
            users=users,
            stream_share=stream_share,
            seed=seed,
            server_env=dict(_setting(item) for item in server_env),
            log=log,
        )
    except MemstackError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(
        f"{result.requests} turns in {result.duration_s} s at {clients} clients ({result.rps}/s, {result.errors} "
        f"errors; p50 {result.p50_ms} ms, p95 {result.p95_ms} ms, p99 {result.p99_ms} ms). Server RSS: "
        f"{result.rss_start_mb} MB at start, {result.rss_warm_mb} MB after the warm-up, {result.rss_end_mb} MB at the "
        f"end (max {result.rss_max_mb}, idle {result.rss_idle_mb}), slope {result.rss_slope_mb_per_min} MB/min; "
        f"load average {result.load_avg} on {os.cpu_count()} cores",
        err=as_json,
    )
    if as_json:
        echo_json(result.to_json())


def _setting(item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name.startswith("MEMSTACK_"):
        raise click.BadParameter(f"expected MEMSTACK_NAME=VALUE, got {item!r}", param_hint="--server-env")
    return name, value
