"""Core's log lines about an attempt name its job, attempt, operation, worker session, claim and processor
contract, and no line ever carries the worker's token or a ticket's secret.

A fake worker speaking the real protocol runs two echo jobs, one failing once and then delivered, one
released; the whole run's log is read as the structured formatter writes it.
"""

import logging

import pytest

from config.logging import StructuredFormatter
from processing.models import JobState, ProcessingAttempt, ProcessingJob
from tests.processing.factories import WORKER_TOKEN
from tests.processing.worker_calls import claim_the_next_job, post, queue_echo_jobs, stage_echo_output

pytestmark = pytest.mark.django_db

FIELDS = ("job", "attempt", "operation", "session", "claim", "processor_contract")


def _secrets(value) -> list[str]:
    if isinstance(value, dict):
        return [item for key, inner in value.items() for item in ([inner] if key == "secret" else _secrets(inner))]
    if isinstance(value, list):
        return [item for inner in value for item in _secrets(inner)]
    return []


def _session_with_two_echo_slots() -> str:
    processors = [{"operation": "test.echo/v1", "processor_contract": "echo/1", "slots": 2}]
    response = post("sessions", {"instance": "t", "protocol_version": "1", "processors": processors})
    return response.json()["session_id"]


def test_every_attempt_line_names_its_attempt_and_no_line_holds_a_secret(owner, configure_deployment, caplog):
    configure_deployment(limits={"max_attempts": 3})
    caplog.set_level(logging.INFO)
    delivered_job, _released_job = queue_echo_jobs(owner, 2)
    session = _session_with_two_echo_slots()
    secrets = []

    first = claim_the_next_job(session)
    secrets += _secrets(first)
    report = {"failure_class": "transient_infrastructure", "code": "network", "message": "connection reset"}
    post(f"claims/{first['claim_id']}/failure", report)
    ProcessingJob.objects.filter(pk=delivered_job).update(next_attempt_at=None)  # its backoff, waited out
    released = claim_the_next_job(session)
    secrets += _secrets(released)
    post(f"claims/{released['claim_id']}/release", {})
    second = claim_the_next_job(session)
    secrets += _secrets(second)
    stage_echo_output(second)
    assert post(f"claims/{second['claim_id']}/delivery", {}).status_code == 200
    assert ProcessingJob.objects.get(pk=delivered_job).state == JobState.SUCCEEDED

    lines = {message: [] for message in ("job claimed", "attempt failed", "attempt released", "job finalized")}
    for record in caplog.records:
        if record.getMessage() in lines:
            lines[record.getMessage()].append(record)
    assert [len(records) for records in lines.values()] == [3, 1, 1, 1]
    for records in lines.values():
        for record in records:
            attempt = ProcessingAttempt.objects.get(claim_id=record.claim)
            assert {field: getattr(record, field) for field in FIELDS} == {
                "job": str(attempt.job_id),
                "attempt": attempt.number,
                "operation": "test.echo/v1",
                "session": session,
                "claim": str(attempt.claim_id),
                "processor_contract": "echo/1",
            }
    assert lines["attempt failed"][0].code == "network"

    written = "\n".join(StructuredFormatter().format(record) for record in caplog.records)
    assert len(secrets) >= 3  # each claim brought its ticket secrets
    for secret in [WORKER_TOKEN, *secrets]:
        assert secret not in written
