"""Which Core-owned finalizer finishes each operation's jobs.

The room that owns a finalizer registers it for its operations when its app is
ready (``finalizer_register``); finalization looks it up by the job's
operation. The operation registry stays below every finalizer, and no
finalizer is named by a string a contract cannot see. A system check
(``processing.E010``) reports an operation without a finalizer at start-up.
"""

from typing import Protocol

from django.core import checks

from processing.finalization.publication import Publication
from processing.models import ProcessingJob, StagedOutput
from processing.operations import REGISTRY


class Finalizer(Protocol):
    def __call__(self, job: ProcessingJob, staged: list[StagedOutput], /) -> Publication: ...


class FinalizerMissing(LookupError):
    pass


FINALIZERS: dict[str, Finalizer] = {}


def finalizer_register(operation: str, finalizer: Finalizer) -> None:
    """Register ``finalizer`` for ``operation``; registering a second, different one is a programming error."""
    if operation not in REGISTRY:
        raise FinalizerMissing(f"{operation!r} is not an operation Core knows")
    current = FINALIZERS.setdefault(operation, finalizer)
    if current is not finalizer:
        raise ValueError(f"{operation!r} already has the finalizer {current!r}")


def finalizer_for(operation: str) -> Finalizer:
    try:
        return FINALIZERS[operation]
    except KeyError:
        raise FinalizerMissing(f"no finalizer is registered for {operation!r}") from None


@checks.register()
def every_operation_has_a_finalizer(app_configs, **kwargs) -> list[checks.Error]:
    return [
        checks.Error(f"Operation {name!r} has no registered finalizer.", id="processing.E010")
        for name in REGISTRY
        if name not in FINALIZERS
    ]
