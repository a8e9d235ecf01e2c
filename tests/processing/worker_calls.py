"""Worker protocol calls for in-process tests: an echo deployment's session, claims and outputs."""

import contextlib
import hashlib
import json
import uuid

import psycopg
from rest_framework.test import APIClient

from processing.submission.submit import job_submit
from tests.factories import ProjectFactory
from tests.processing.factories import WORKER_TOKEN

PREFIX = "/internal/processing/v1"
ECHO = "test.echo/v1"
ONE_ECHO_PERMIT = [{"operation": ECHO, "permits": 1}]


def worker_client(token: str = WORKER_TOKEN) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def post(path: str, payload: dict, request_id: str | None = None, *, client: APIClient | None = None):
    """A mutating worker call with a fresh ``request_id`` unless one is given; as the pool identity by default."""
    body = json.dumps({**payload, "request_id": request_id or uuid.uuid4().hex})
    return (client or worker_client()).generic("POST", f"{PREFIX}/{path}", body, content_type="application/json")


def queue_echo_jobs(owner, count: int) -> list[str]:
    """``count`` queued echo jobs, oldest first, each of a project of its own (so none is a reuse hit)."""
    return [
        str(
            job_submit(
                actor_id=owner.pk,
                operation_name=ECHO,
                idempotency_key=f"k{index}",
                project_id=ProjectFactory(owner=owner, starter=True).pk,
            ).job_id
        )
        for index in range(count)
    ]


def session_with_one_echo_slot() -> str:
    processors = [{"operation": ECHO, "processor_contract": "echo/1", "slots": 1}]
    response = post("sessions", {"instance": "t", "protocol_version": "1", "processors": processors})
    assert response.status_code == 201, response.content
    return response.json()["session_id"]


def claim_the_next_job(session_id: str) -> dict:
    response = post(f"sessions/{session_id}/acquire", {"offers": ONE_ECHO_PERMIT, "wait_seconds": 0})
    return response.json()["claim"]


def stage_echo_output(claim: dict, data: bytes = b"echoed") -> None:
    declared = {
        "role": "echo",
        "media_type": "application/octet-stream",
        "filename": "echo",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    ticket = post(f"claims/{claim['claim_id']}/uploads", declared).json()
    response = put_bytes(ticket, data)
    assert response.status_code == 200, response.content


def put_bytes(ticket: dict, data: bytes, *, client: APIClient | None = None, **declared: str):
    """PUT ``data`` on an upload ticket; ``declared`` (media_type, sha256, filename) become X-Quire-* headers."""
    headers = {f"HTTP_X_QUIRE_{name.upper()}": value for name, value in declared.items()}
    return (client or worker_client()).generic(
        "PUT",
        ticket["url"],
        data,
        content_type="application/octet-stream",
        HTTP_X_QUIRE_TRANSFER_SECRET=ticket["secret"],
        **headers,
    )


@contextlib.contextmanager
def statements_sent(monkeypatch):
    """Collect the SQL of every statement sent to PostgreSQL meanwhile (Django's cursors and prepared ones)."""
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def recorded(cursor, query, *args, **kwargs):
        sent.append(str(query))
        return execute(cursor, query, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(psycopg.Cursor, "execute", recorded)
        yield sent
