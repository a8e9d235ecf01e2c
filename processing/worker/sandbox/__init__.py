"""Executors that run one job's commands confined and bounded (architecture §7)."""

from processing.worker.sandbox.bwrap import BwrapExecutor, sandbox_self_check
from processing.worker.sandbox.local import LocalExecutor

__all__ = ["BwrapExecutor", "LocalExecutor", "sandbox_self_check"]
