"""Schemathesis fuzzes every operation of the OpenAPI schema over real HTTP: no input may produce a 5xx, and every
response must match its documented schema and status codes. Bounded: a fixed number of examples per operation, with
a fixed seed so a run is repeatable."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from memstack.server import create_app

from .conftest import Running

# The schema is the app's own (building the app opens nothing); the requests go to the running server over HTTP.
schema = schemathesis.openapi.from_dict(create_app().openapi())

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_no_input_produces_a_server_error(case: schemathesis.Case, running: Running) -> None:
    case.call_and_validate(base_url=running.url, headers={"Authorization": f"Bearer {running.key_a}"}, checks=CHECKS)
