"""Schemathesis fuzzes every operation of the OpenAPI schema over real HTTP: no input may produce a 5xx, and every
response must match its documented schema and status codes. Bounded: a fixed number of examples per operation, with
a fixed seed so a run is repeatable. Once on SQLite and once on PostgreSQL, which refuses text SQLite would take
(a NUL): the answer must be a 4xx on both, never a 5xx. A third test puts a NUL or a lone surrogate into one
string of each generated request (a path or query parameter, any value or key of the body) on PostgreSQL: whatever
else the request gets wrong, it must be refused with a 4xx, never answered with a 2xx or a 5xx."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core import NotSet

from memstack.config import Config
from memstack.engine import AsyncMemstack
from memstack.server import ServerSettings, create_app
from memstack.server.runner import BackgroundServer
from memstack_testing.postgres import EmbeddedPostgres

from .conftest import Running, make_config

# The schema is the app's own (building the app opens nothing); the requests go to the running server over HTTP.
schema = schemathesis.openapi.from_dict(create_app().openapi())

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_input_produces_a_server_error(case: schemathesis.Case, running: Running) -> None:
    case.call_and_validate(base_url=running.url, headers={"Authorization": f"Bearer {running.key_a}"}, checks=CHECKS)


@pytest.fixture(scope="module")
def running_pg(tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres) -> Iterator[Running]:
    home: Path = tmp_path_factory.mktemp("fuzz-pg")
    config = Config.resolve(home=home, database_url=postgres_server.create_database(), tiers=make_config(home).tiers)

    async def keys() -> tuple[str, str]:
        async with AsyncMemstack(config) as ms:
            return (await ms.store.keys.create("acme"))[1], (await ms.store.keys.create("globex"))[1]

    key_a, key_b = asyncio.run(keys())
    app = create_app(config, settings=ServerSettings(auth="keys", max_body_bytes=64_000))
    with BackgroundServer(app) as server:
        yield Running(server.url, home, key_a, key_b, revoked="")


@pytest.mark.postgres
@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_input_produces_a_server_error_on_postgresql(case: schemathesis.Case, running_pg: Running) -> None:
    headers = {"Authorization": f"Bearer {running_pg.key_a}"}
    case.call_and_validate(base_url=running_pg.url, headers=headers, checks=CHECKS)


#: Every operation that takes text (a parameter or a body).
TEXT_OPERATIONS = [
    op for op in (result.ok() for result in schema.get_all_operations()) if op.path_parameters or op.query or op.body
]


def _strings(value: object, at: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Where the strings of a JSON value are: paths of keys and indexes (a trailing ``"#key"`` for a key itself)."""
    if isinstance(value, str):
        return [at]
    if isinstance(value, dict):
        return [
            spot for key, item in value.items() for spot in [(*at, key, "#key"), *_strings(item, (*at, key))]
        ]  # fmt: skip
    if isinstance(value, list):
        return [spot for i, item in enumerate(value) for spot in _strings(item, (*at, i))]
    return []


def _spoil(value: object, at: tuple[object, ...], bad: str) -> object:
    """``value`` with ``bad`` added to the string (or key) at ``at``."""
    if not at:
        return f"{value}{bad}"
    if isinstance(value, dict):
        key = at[0]
        if at[1:] == ("#key",):
            return {(f"{k}{bad}" if k == key else k): v for k, v in value.items()}
        return {k: (_spoil(v, at[1:], bad) if k == key else v) for k, v in value.items()}
    assert isinstance(value, list) and isinstance(at[0], int)
    return [(_spoil(v, at[1:], bad) if i == at[0] else v) for i, v in enumerate(value)]


@pytest.mark.postgres
@pytest.mark.parametrize("operation", TEXT_OPERATIONS, ids=lambda op: f"{op.method.upper()} {op.path}")
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_unstorable_text_anywhere_is_refused_on_postgresql(
    operation: Any, data: st.DataObject, running_pg: Running
) -> None:
    case = data.draw(operation.as_strategy())
    spots: list[tuple[str, tuple[object, ...]]] = [("path", (k,)) for k in case.path_parameters or {}]
    spots += [("query", (k,)) for k, v in (case.query or {}).items() if isinstance(v, str)]
    spots += [("body", at) for at in _strings(case.body)]
    assume(spots)
    part, at = data.draw(st.sampled_from(spots))
    # A URL carries no lone surrogate (it would have to be encoded as UTF-8 first): NUL only there.
    bad = data.draw(st.sampled_from(["\x00", "\ud800", "\udfff"] if part == "body" else ["\x00"]))
    if part == "body":
        case.body = _spoil(case.body, at, bad)
    else:
        values = case.path_parameters if part == "path" else case.query
        values[at[0]] = f"{values[at[0]]}{bad}"
    response = _send(case, running_pg)
    assert 400 <= response.status_code < 500, (part, at, repr(bad), response.status_code, response.text[:500])


def _send(case: schemathesis.Case, running: Running) -> httpx.Response:
    """The case over HTTP as a client would send it: a lone surrogate as a JSON escape (schemathesis' own call
    refuses to encode one), path parameters percent-encoded."""
    path = case.operation.path
    for name, value in (case.path_parameters or {}).items():
        path = path.replace(f"{{{name}}}", quote(str(value), safe=""))
    headers = {"Authorization": f"Bearer {running.key_a}"}
    content = None
    if not isinstance(case.body, NotSet):
        if case.media_type in (None, "application/json"):
            content, headers["content-type"] = json.dumps(case.body).encode(), "application/json"
        else:  # YAML escapes what it cannot print ("\\uD800")
            content, headers["content-type"] = yaml.safe_dump(case.body).encode(), case.media_type
    return httpx.request(case.method, running.url + path, params=case.query, content=content, headers=headers)
