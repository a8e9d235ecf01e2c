"""Capability projection (docs/architecture.md §9): which operations exist here, and whether a worker is live.

An operation appears only if Core knows it, the distribution allows it and the
deployment names a worker identity for it. It is ``available`` when a live,
healthy session of such an identity declares a processor for it, else ``waiting``.
"""

from dataclasses import dataclass

from django.utils import timezone

from processing.exceptions import OperationNotEnabled
from processing.kernel.configuration import deployment, distribution
from processing.models import SessionState, WorkerProcessor
from processing.operations import REGISTRY, Operation

AVAILABLE = "available"
WAITING = "waiting"


@dataclass(frozen=True)
class Capability:
    operation: str
    state: str
    project_types: tuple[str, ...]
    input_profiles: dict[str, str] | None


def enabled_operations() -> list[Operation]:
    allowed = distribution().operations
    configured = deployment().operations_with_identity()
    return [op for name, op in REGISTRY.items() if name in allowed and name in configured]


def operation_enabled(name: str) -> Operation:
    """The operation if this deployment exposes it; raise OperationNotEnabled otherwise."""
    operation = next((op for op in enabled_operations() if op.name == name), None)
    if operation is None:
        raise OperationNotEnabled(details={"operation": name})
    return operation


def live_processors(operation: str):
    """Processors of live, active sessions whose identity is still configured for ``operation``."""
    identities = [identity.name for identity in deployment().workers if operation in identity.operations]
    return WorkerProcessor.objects.filter(
        operation=operation,
        healthy=True,
        session__state=SessionState.ACTIVE,
        session__expires_at__gt=timezone.now(),
        session__identity__in=identities,
    )


def live_contracts(operation: str) -> set[str]:
    return set(live_processors(operation).values_list("processor_contract", flat=True))


def capabilities_list(*, project_type: str | None = None) -> list[Capability]:
    profiles = distribution().input_profiles
    result = []
    for op in enabled_operations():
        if project_type is not None and project_type not in op.project_types:
            continue
        state = AVAILABLE if live_processors(op.name).exists() else WAITING
        result.append(Capability(op.name, state, op.project_types, profiles.get(op.name)))
    return result
