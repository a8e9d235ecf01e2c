"""Executors that run one job's commands confined and bounded (docs/architecture.md §13)."""

from quire_worker.sandbox.bwrap import BwrapExecutor, sandbox_self_check
from quire_worker.sandbox.local import LocalExecutor

__all__ = ["BwrapExecutor", "LocalExecutor", "sandbox_self_check"]
