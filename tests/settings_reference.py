"""``docs/settings.md``, generated: every setting of :class:`memstack.config.Config` with its variable and default,
every other ``MEMSTACK_*`` variable memstack reads, and every model provider with its URL and key variables.

Run ``python -m tests.settings_reference --write`` after changing a setting or a provider;
``tests/test_settings_reference.py`` fails while the committed page differs from this output, when a variable the
code reads is missing from it, or when a provider is. The names, types, defaults and provider rows come from the code
(``Config``'s fields, ``SEED_TIER_LIMITS``, ``PROVIDERS``); what each one is for is written here, once, and
:func:`render` refuses a ``Config`` field without its line, so a new setting cannot reach the page undocumented.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

from memstack.config import ENV_PREFIX, SEED_TIER_LIMITS, Config
from memstack.models.providers import PROVIDERS

PAGE = Path(__file__).resolve().parents[1] / "docs" / "settings.md"

#: What each ``Config`` field is for, in the order the page lists them.
CONFIG: dict[str, str] = {
    "home": "The data directory: holds `memstack.db` (the SQLite store) and agent files. Unset: `./.memstack` when "
    "the current directory has one, else `$XDG_DATA_HOME/memstack` (`~/.local/share/memstack`), the same from any "
    "directory. Every CLI command names the one it uses on stderr.",
    "database_url": "`postgresql://user:pass@host/db` selects PostgreSQL with pgvector; unset (or "
    "`sqlite:///path/memstack.db`) the embedded SQLite store.",
    "embedder": "The embedding model: `local:minilm` (MiniLM, int8 ONNX, installed with memstack) or "
    "`openai:<model>`. A store keeps the model it was made with; switch with `memstack reembed`.",
    "chat_model": "The model that writes replies, `provider:model` (providers below). Unset: the offline "
    "responder, which shows the context a model would be given.",
    "classifier_model": "The model that finds memories in each message. Unset: offline rules and embeddings.",
    "summarizer_model": "The model that writes turn summaries, session fact changes and merged memories. Unset: "
    "offline rules.",
    "update_model": "The update judge, which decides whether news supersedes a memory: `offline` or a model string. "
    "Unset: the classifier's model when one is set, else offline.",
    "tiers": "Memory limits per subscription tier (two variables below). Unset: no tiers, no limit.",
    "vector_cache_mb": "SQLite: the in-process cache of users' memory vectors, in MB.",
    "recall_cache_messages": "SQLite: archived messages recall keeps indexed in memory, all users together (about "
    "6 KB each); users are evicted least recently used. PostgreSQL ranks the archive itself.",
    "badge_wait_s": 'Seconds a chat turn waits for memory detection before replying (the "Memory updated" badge); '
    "detection still saves after it.",
    "pool_size": "PostgreSQL connections per process. A turn holds none while the model answers.",
    "session_lease_s": "Seconds a session stays held by a turn whose process stopped renewing it (one that crashed "
    "on another machine; on the same machine it is freed at once).",
    "database_pooler": "`transaction` when `MEMSTACK_DATABASE_URL` goes through a transaction-pooling pooler "
    "(PgBouncer): no prepared statements, settings per transaction. `none` otherwise.",
    "database_direct_url": "With a pooler: PostgreSQL itself, for the work that needs a session of its own (a very "
    "large user's vector index, `memstack reembed`).",
    "database_read_url": "A read replica that answers searches; they may miss what was written less than its "
    "replication delay ago.",
    "model_prices": "Prices of models for the cost estimates of usage and metrics, on top of the built-in table: "
    "`MODEL=INPUT/OUTPUT,…` in US dollars per million tokens, e.g. `openai:gpt-4o-mini=0.15/0.60,ollama:llama3.2=0/0` "
    "([observability](observability.md)). A model without a price reports its tokens with a cost of `null`.",
    "webhooks_allow_private": "`true` or `false`: whether a webhook URL may reach a private, loopback or link-local "
    "address. Unset: allowed in a local deployment (the embedded library, a server not in `keys` mode), refused "
    "otherwise ([webhooks](webhooks.md)).",
    "webhook_timeout_s": "The longest one webhook delivery attempt may take, connection to last byte; a receiver "
    "that does not answer within it is a failed attempt.",
    "webhook_max_attempts": "Attempts of a webhook delivery before it is marked failed (visible, and replayable).",
    "webhook_backoff_s": "The wait before a webhook delivery's second attempt; doubled after each failure, with "
    "jitter, at most an hour.",
    "webhook_max_age_s": "A webhook delivery still not delivered this many seconds after it was written is marked "
    "failed.",
    "webhook_poll_s": "How often an idle webhook delivery worker looks for due deliveries.",
}

#: The variables of ``tiers`` (its one field is set by two).
TIER_VARIABLES: dict[str, str] = {
    "MEMSTACK_TIER_LIMITS": "The tiers and their active-memory limits: `name=N` pairs, `unlimited` for none, e.g. "
    "`free=50,lite=100,pro=500,premium=unlimited`.",
    "MEMSTACK_DEFAULT_TIER": "The tier of a user whose request names none. Set alone, it turns on the seed's tiers "
    "({seed}) and picks among them.",
}

#: Variables read outside ``Config``: (variable, who reads it, what it does).
OTHER: list[tuple[str, str, str]] = [
    (
        "MEMSTACK_EMBED_WORKERS",
        "the local embedding model",
        "Model runs at once (a whole number, at least 1). Unset: the number of cores, at most 4.",
    ),
    (
        "MEMSTACK_URL",
        "the Python client",
        "The server's URL when `MemstackClient` / `AsyncMemstackClient` is given none. Unset: `http://127.0.0.1:8700`.",
    ),
    (
        "MEMSTACK_API_KEY",
        "the Python client",
        "The API key when the client is given none. Unset: `MEMSTACK_KEY`, else no key (a server in local mode).",
    ),
    (
        "MEMSTACK_KEY",
        "the Python client, the docs' shell examples",
        "The API key, read after `MEMSTACK_API_KEY`; the examples export it with "
        "`export MEMSTACK_KEY=$(memstack keys create --tenant acme --quiet)`.",
    ),
    (
        "MEMSTACK_MCP_USER",
        "`memstack mcp`",
        "The one user every MCP tool call acts for (as `--user`); a call naming another user is refused.",
    ),
    (
        "MEMSTACK_SERVER_AUTH",
        "`memstack serve --workers N`",
        "Set by `memstack serve` for its worker processes: the key mode it chose (`local`, `auto`; anything else "
        "requires keys). Not meant to be set by hand: use `memstack serve --auth`.",
    ),
    (
        "MEMSTACK_METRICS_TOKEN",
        "`memstack serve`",
        "The bearer token `GET /metrics` requires, in every key mode. Unset: a local server serves the metrics to "
        "anyone on the machine, and one that requires keys answers 403 ([observability](observability.md)).",
    ),
    (
        "MEMSTACK_METRICS_TENANTS",
        "`memstack serve`",
        "How many tenants the metrics name before counting the rest as `other` (a whole number, at least 0; `0` "
        "drops tenants from the labels). Unset: 20.",
    ),
    (
        "MEMSTACK_OTEL_ENDPOINT",
        "the engine",
        "An OTLP/HTTP collector (`http://collector:4318`; `/v1/traces` is added) to send OpenTelemetry traces to; "
        "needs the `otel` extra. Unset: no traces unless a standard `OTEL_EXPORTER_OTLP_*` variable is set or the "
        "application configured OpenTelemetry itself.",
    ),
    (
        "MEMSTACK_NAME",
        "`memstack bench chat --server-env`",
        "Not a variable: `--server-env MEMSTACK_NAME=VALUE` stands for any variable of this page, set for the "
        "server process the benchmark starts (e.g. `--server-env MEMSTACK_RECALL_CACHE_MESSAGES=1000`).",
    ),
]

#: Variables without the prefix that memstack reads.
FOREIGN: list[tuple[str, str]] = [
    ("XDG_DATA_HOME", "The base of the per-user data directory (`$XDG_DATA_HOME/memstack`); unset or relative: "
     "`~/.local/share`."),
    ("MALLOC_MMAP_THRESHOLD_", "glibc's mmap threshold. Unset, a process that loads the local embedding model fixes "
     "it at 1 MB, so large tensors go back to the system after each run."),
    ("`<PROVIDER>_API_KEY`", "Each provider's API key (the table below), e.g. `OPENAI_API_KEY`."),
    ("`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`", "The standard OpenTelemetry variables: "
     "either turns traces on as `MEMSTACK_OTEL_ENDPOINT` does (the exporter reads them, with their headers, itself); "
     "`OTEL_SERVICE_NAME` names the service."),
]  # fmt: skip


def variable(field: str) -> str:
    """The variable that sets ``Config`` field ``field`` (``Config.resolve`` reads ``MEMSTACK_`` + its name)."""
    return f"{ENV_PREFIX}{field.upper()}"


def _kind(hint: object) -> str:
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    names = {Path: "path", str: "text", int: "whole number", float: "number"}
    return " or ".join(names.get(a, getattr(a, "__name__", str(a))) for a in args)


def _default(field: dataclasses.Field[object]) -> str:
    if field.name == "home":
        return "see the description"
    if field.name == "tiers":
        return "none"
    if field.default is dataclasses.MISSING:
        raise ValueError(f"Config.{field.name} has a computed default: say in render() how to show it")
    if field.default is None:
        return "unset"
    return f"`{field.default}`"


def _config_rows() -> Iterator[str]:
    fields = {f.name: f for f in dataclasses.fields(Config)}
    if set(fields) != set(CONFIG):
        missing, stale = sorted(set(fields) - set(CONFIG)), sorted(set(CONFIG) - set(fields))
        raise ValueError(f"describe every Config field in tests/settings_reference.py: missing {missing}, gone {stale}")
    hints = typing.get_type_hints(Config)
    seed = ", ".join(
        f"{name} {limit if limit is not None else 'unlimited'}" for name, limit in SEED_TIER_LIMITS.items()
    )
    for name, what in CONFIG.items():
        if name == "tiers":
            for var, text in TIER_VARIABLES.items():
                yield f"| `{name}` | `{var}` | text | none | {text.format(seed=seed)} |"
            continue
        yield f"| `{name}` | `{variable(name)}` | {_kind(hints[name])} | {_default(fields[name])} | {what} |"


def _provider_rows() -> Iterator[str]:
    for row in PROVIDERS.values():
        url = f"`{row.base_url}`" if row.base_url else "none: set the variable"
        key = f"`{row.api_key_env}`" if row.api_key_env else "none"
        needed = "yes" if row.key_required else "no"
        yield f"| `{row.name}` | {url} | `{row.base_url_env}` | {key} | {needed} |"


def render() -> str:
    """The whole of ``docs/settings.md``."""
    lines = [
        "# Settings",
        "",
        "<!-- Generated by `python -m tests.settings_reference --write` from memstack's configuration code; do not",
        "     edit by hand (tests/test_settings_reference.py fails when this page differs from the generator). -->",
        "",
        "Every setting is a keyword argument of `Memstack` / `AsyncMemstack` (or a field of `memstack.Config`), and",
        'falls back to its environment variable, then to its default: `Memstack(chat_model="openai:gpt-4o-mini")`',
        "or `MEMSTACK_CHAT_MODEL=openai:gpt-4o-mini`. An empty variable counts as unset. A bad value is a",
        "`ConfigError` naming the setting and its variable.",
        "",
        "## Library settings",
        "",
        "| setting | variable | value | default | what it does |",
        "|---|---|---|---|---|",
        *_config_rows(),
        "",
        "## Other variables",
        "",
        "| variable | read by | what it does |",
        "|---|---|---|",
        *(f"| `{name}` | {who} | {what} |" for name, who, what in OTHER),
        "",
        "Without the `MEMSTACK_` prefix:",
        "",
        "| variable | what it does |",
        "|---|---|",
        *(f"| `{name}` | {what} |" if not name.startswith("`") else f"| {name} | {what} |" for name, what in FOREIGN),
        "",
        "## Model providers",
        "",
        "A model setting (`chat_model`, `classifier_model`, `summarizer_model`, `update_model`) is `provider:model`:",
        "`openai:gpt-4o-mini`, `ollama:llama3.2`, `ollama:qwen2.5:7b` (split at the first colon). Every provider is",
        "an OpenAI-compatible endpoint: its base URL is `MEMSTACK_<PROVIDER>_BASE_URL` when set, else the default",
        "below; its key is the key variable's value. A provider that needs a key and has none is a `ConfigError`",
        "naming the variable, raised when the model is first used (managing memories still works). Any other",
        "OpenAI-compatible server is `custom:<model>` with `MEMSTACK_CUSTOM_BASE_URL`.",
        "",
        "| provider | default base URL | base URL variable | API key variable | key required |",
        "|---|---|---|---|---|",
        *_provider_rows(),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.settings_reference", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {PAGE.name} instead of printing it")
    args = parser.parse_args(argv)
    text = render()
    if args.write:
        PAGE.write_text(text, encoding="utf-8")
        print(f"wrote {PAGE.relative_to(PAGE.parents[1])}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
