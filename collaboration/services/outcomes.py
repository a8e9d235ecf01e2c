"""What became of updates offered to a document's log (see ``accepting``)."""

from dataclasses import dataclass
from enum import StrEnum


class Outcome(StrEnum):
    STORED = "stored"
    CONTAINED = "contained"  # the document already had it: acknowledged, not stored again
    REFUSED = "refused"


@dataclass(frozen=True)
class Submitted:
    actor_id: int
    update: bytes


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    code: str = ""
    message: str = ""


@dataclass(frozen=True)
class BatchStored:
    """What became of a batch. ``verdicts`` has one entry per update looked at, in order: all of them, or
    up to and including the first refused. ``stored`` is everything appended to the log (a reconciling
    server update included), merged, for live editors; ``state_vector`` the document's state after it."""

    verdicts: list[Verdict]
    stored: bytes | None
    stored_from: int
    last_seq: int
    state_vector: bytes
    text_sha256: str = ""  # Workspace's digest, when the batch was projected before the answer

    @property
    def changed(self) -> bool:
        return self.stored is not None
