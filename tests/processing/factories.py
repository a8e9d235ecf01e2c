import hashlib
import json
import uuid
from datetime import timedelta

import factory
from django.utils import timezone

from processing.models import JobState, ProcessingJob, SessionState, WorkerProcessor, WorkerSession
from tests.factories import UserFactory

WORKER_TOKEN = "worker-token-for-tests"
WORKER_TOKEN_SHA256 = hashlib.sha256(WORKER_TOKEN.encode()).hexdigest()


def deployment_toml(
    *, operations: list[str], limits: dict | None = None, identity: str = "pool", partitions: dict | None = None
) -> str:
    lines = ["[limits]"]
    lines += [f"{key} = {value}" for key, value in (limits or {}).items()]
    for name, table in (partitions or {}).items():
        lines += ["", f"[partitions.{name}]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in table.items()]
    ops = ", ".join(f'"{op}"' for op in operations)
    lines += [
        "",
        "[[workers]]",
        f'name = "{identity}"',
        f'token_sha256 = "{WORKER_TOKEN_SHA256}"',
        f"operations = [{ops}]",
    ]
    return "\n".join(lines) + "\n"


class WorkerSessionFactory(factory.django.DjangoModelFactory):
    """A live session of the configured identity; ``processors`` maps operation → slots."""

    class Meta:
        model = WorkerSession
        skip_postgeneration_save = True

    id = factory.LazyFunction(uuid.uuid4)
    identity = "pool"
    instance = factory.Sequence(lambda n: f"agent-{n}")
    protocol_version = "1"
    state = SessionState.ACTIVE
    registered_at = factory.LazyFunction(timezone.now)
    last_heartbeat_at = factory.LazyFunction(timezone.now)
    expires_at = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=5))

    @factory.post_generation
    def processors(session, create, extracted, **kwargs):
        for operation, slots in (extracted or {}).items():
            WorkerProcessor.objects.create(
                session=session,
                operation=operation,
                processor_contract=f"{operation}-contract/1",
                slots=slots,
            )


class JobFactory(factory.django.DjangoModelFactory):
    """A job written straight into the table, for tests of what reads jobs (reapers, rollups, the task center).

    A test of what submission does submits (``job_submit``); a job made here skips capture, so a state that
    needs an input blob (queued, running, finalizing) is not offered as a trait. Traits: ``preparing``,
    ``succeeded``, ``failed``, ``cancelled``, ``expired``.
    """

    class Meta:
        model = ProcessingJob

    class Params:
        requester = None  # a user; a new one unless requester or requester_id is given
        preparing = factory.Trait(
            state=JobState.PREPARING,
            deadline_at=factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=10)),
            preparation_lease_until=factory.LazyFunction(lambda: timezone.now() + timedelta(seconds=30)),
        )
        succeeded = factory.Trait(state=JobState.SUCCEEDED, completed_at=factory.LazyFunction(timezone.now))
        failed = factory.Trait(
            state=JobState.FAILED,
            completed_at=factory.LazyFunction(timezone.now),
            failure_class="transient_infrastructure",
            failure_code="test_failure",
            failure_message="failed in a test",
        )
        cancelled = factory.Trait(state=JobState.CANCELLED, completed_at=factory.LazyFunction(timezone.now))
        expired = factory.Trait(state=JobState.EXPIRED, completed_at=factory.LazyFunction(timezone.now))

    operation = "test.echo/v1"
    requester_id = factory.LazyAttribute(lambda job: (job.requester or UserFactory()).pk)
    options = factory.LazyFunction(dict)
    options_digest = "0" * 64
    state = JobState.PREPARING
