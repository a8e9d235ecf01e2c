"""The distribution (what this build allows) and the deployment (limits and worker identities).

Both are TOML files read once per process and re-read when they change on disk.
"""

import hmac
import os
import tomllib
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from foundation.env import BASE_DIR, VAR_DIR
from processing.kernel.partitions import Partition, partitions_parse

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    queued_jobs_global: int = 1000
    active_jobs_per_requester: int = 20
    active_jobs_per_project: int = 10
    running_jobs_per_requester: int = 4
    running_jobs_per_project: int = 4
    input_bytes: int = 64 * MiB
    artifact_bytes: int = 128 * MiB
    diagnostic_bytes: int = 256 * 1024
    max_attempts: int = 3
    wall_seconds: int = 300
    queue_wait_seconds: int = 86400
    preparation_seconds: int = 600
    # How long a submission's request holds its job's preparation: a retry with the same key takes it over after
    preparation_lease_seconds: int = 30
    retention_days: int = 30
    lease_seconds: int = 30
    finalization_lease_seconds: int = 120
    session_ttl_seconds: int = 30
    transfer_ticket_seconds: int = 600
    idempotency_hours: int = 24
    retry_backoff_seconds: float = 2.0
    retry_backoff_max_seconds: float = 300.0


@dataclass(frozen=True)
class WorkerIdentity:
    name: str
    token_sha256: str
    operations: frozenset[str]


@dataclass(frozen=True)
class Deployment:
    limits: Limits = field(default_factory=Limits)
    workers: tuple[WorkerIdentity, ...] = ()
    partitions: tuple[Partition, ...] = field(default_factory=lambda: partitions_parse(None, Limits()))

    def partition_of(self, operation: str) -> Partition:
        return next(partition for partition in self.partitions if partition.holds(operation))

    def identity_for_token_digest(self, digest: str) -> WorkerIdentity | None:
        for identity in self.workers:
            if hmac.compare_digest(identity.token_sha256, digest):
                return identity
        return None

    def operations_with_identity(self) -> frozenset[str]:
        return frozenset(op for identity in self.workers for op in identity.operations)


@dataclass(frozen=True)
class Distribution:
    name: str
    operations: frozenset[str]
    input_profiles: dict[str, dict[str, str]]


def _file_key(path: Path | str) -> tuple[str, int]:
    """The file's path and modification time (0 when it is missing): one ``stat``, as every job asks many times."""
    try:
        return str(path), os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return str(path), 0


_DEFAULT_DEPLOYMENT = str(VAR_DIR / "deployment.toml")


def deployment_path() -> Path:
    return Path(settings.QUIRE_DEPLOYMENT_FILE or _DEFAULT_DEPLOYMENT)


def deployment() -> Deployment:
    return _deployment_cached(*_file_key(settings.QUIRE_DEPLOYMENT_FILE or _DEFAULT_DEPLOYMENT))


@lru_cache(maxsize=8)
def _deployment_cached(path: str, mtime: int) -> Deployment:
    if not mtime:
        return Deployment()
    raw = tomllib.loads(Path(path).read_text())
    known = {item.name for item in fields(Limits)}
    unknown = set(raw.get("limits", {})) - known
    if unknown:
        raise ValueError(f"unknown limits in {path}: {sorted(unknown)}")
    workers = tuple(
        WorkerIdentity(
            name=item["name"],
            token_sha256=item["token_sha256"].lower(),
            operations=frozenset(item["operations"]),
        )
        for item in raw.get("workers", [])
    )
    limits = Limits(**raw.get("limits", {}))
    return Deployment(limits=limits, workers=workers, partitions=partitions_parse(raw.get("partitions"), limits))


def distribution() -> Distribution:
    path = BASE_DIR / "config" / "distributions" / f"{settings.QUIRE_DISTRIBUTION}.toml"
    return _distribution_cached(*_file_key(path), getattr(settings, "QUIRE_TEST_OPERATIONS", False))


@lru_cache(maxsize=8)
def _distribution_cached(path: str, mtime: int, with_test_operations: bool) -> Distribution:
    if not mtime:
        raise ValueError(f"no distribution file at {path}")
    raw = tomllib.loads(Path(path).read_text())
    operations = set(raw["operations"])
    if with_test_operations:
        operations.add("test.echo/v1")
    return Distribution(
        name=raw["name"], operations=frozenset(operations), input_profiles=raw.get("input_profiles", {})
    )


def limits() -> Limits:
    return deployment().limits
