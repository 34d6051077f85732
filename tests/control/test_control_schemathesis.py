"""schemathesis against the live control endpoint: requests generated from the OpenAPI document
(valid and invalid ones) for every operation of the table, each answer checked against the same
document (status codes, content type, response schema, no server errors). Every request sends
the emulator's token, as the document's security scheme asks."""

from __future__ import annotations

import attrs
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks

from kafka_emu.control.operations import all_operations
from kafka_emu.testing.emulator import make_config, run_in_thread


@pytest.fixture(scope="module")
def control():
    """(the schema, the headers every request sends)."""
    with run_in_thread(make_config(topics={"orders": 3}), control_port=0) as emu:
        headers = {"Authorization": f"Bearer {emu.control_token}"}
        yield schemathesis.openapi.from_url(f"{emu.control_url}/openapi.json",
                                            headers=headers), headers


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("name", sorted(all_operations()))
def test_every_answer_matches_the_document(control, name, mode):
    control_schema, headers = control
    op = all_operations()[name]
    if op.is_async:
        pytest.skip(f"{name} waits (up to its own timeout): generated timeouts would stall the run")
    operation = control_schema[op.path][op.method]

    @given(operation.as_strategy(generation_mode=mode))
    @settings(max_examples=15, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def check(case):
        if op.is_async and any(f.name == "timeout" for f in attrs.fields(op.params)):
            # A waiter waits as long as it is told (30 s by default): keep each generated wait
            # short, whatever else the case holds.
            case.query = {**(case.query or {}), "timeout": 0.1}
        # Left out: schema-valid input may still be refused (the document says "an integer",
        # the operation also wants it non-negative), and schema-invalid input may be accepted
        # (parse_params reads "5" as 5 for every surface, since query strings and CLI flags are
        # text). Every answer must still be documented JSON and never a 5xx.
        case.call_and_validate(headers=headers, excluded_checks=[checks.positive_data_acceptance,
                                                checks.negative_data_rejection])

    try:
        check()
    except Unsatisfiable:
        if mode is GenerationMode.POSITIVE:
            raise
        pytest.skip(f"{name}: nothing in its document can be made invalid")
