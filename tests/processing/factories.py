import hashlib
import json
import uuid
from datetime import timedelta

import factory
from django.utils import timezone

from processing.models import SessionState, WorkerProcessor, WorkerSession

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
