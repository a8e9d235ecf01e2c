"""Admission partitions: operations of one resource class share their active and running quotas, and only them.

Seed 000: "a deployment should not combine materially different resource classes behind one quota without
first adding an explicit partition". A build holds a TeX or Typst sandbox for seconds to minutes; indexing a
library PDF is a short text extraction: one user's builds must not use up the quota their indexing needs, nor
the other way round. The deployment TOML names the partitions (``[partitions.<name>]``: ``operations`` and any
of the four quotas, the rest taken from ``[limits]``); without a ``[partitions]`` table these built-in ones
apply. An operation no partition names is in the ``default`` partition, with ``[limits]``'s quotas.
"""

from dataclasses import dataclass

QUOTAS = (
    "active_jobs_per_requester",
    "active_jobs_per_project",
    "running_jobs_per_requester",
    "running_jobs_per_project",
)
BUILT_IN = {
    "builds": ("latex.compile.pdf/v1", "typst.compile.pdf/v1", "typst.export.pptx/v1", "pptx.import.typst/v1"),
    "library": ("pdf.index.text/v1",),
}
DEFAULT = "default"


@dataclass(frozen=True)
class Partition:
    name: str
    operations: tuple[str, ...]  # the default partition's are every operation the others do not name
    active_jobs_per_requester: int
    active_jobs_per_project: int
    running_jobs_per_requester: int
    running_jobs_per_project: int
    others: tuple[str, ...] = ()  # for the default partition: the operations of every other partition

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT

    def holds(self, operation: str) -> bool:
        return operation not in self.others if self.is_default else operation in self.operations


def partitions_parse(raw: dict | None, limits) -> tuple[Partition, ...]:
    """The deployment's partitions, the default one last; raises ValueError for a table that cannot be meant."""
    tables = {name: {"operations": list(operations)} for name, operations in BUILT_IN.items()} if raw is None else raw
    partitions, named = [], {}
    for name, table in tables.items():
        unknown = set(table) - {"operations", *QUOTAS}
        if name == DEFAULT or unknown or not table.get("operations"):
            raise ValueError(f"partition {name!r}: name, unknown keys {sorted(unknown)} or no operations")
        for operation in table["operations"]:
            if operation in named:
                raise ValueError(f"{operation} is in two partitions: {named[operation]} and {name}")
            named[operation] = name
        quotas = {quota: int(table.get(quota, getattr(limits, quota))) for quota in QUOTAS}
        partitions.append(Partition(name, tuple(table["operations"]), **quotas))
    default = {quota: getattr(limits, quota) for quota in QUOTAS}
    return (*partitions, Partition(DEFAULT, (), **default, others=tuple(sorted(named))))
