"""Capture (docs/architecture.md §9): Workspace freezes the project under its fence, then the bundle is built
outside it.

Lock order: the project fence (Workspace's project row) is the only lock held, and only for Workspace's freeze
transaction, in which its documents' keeper (Collaboration) writes every accepted edit into the rows before the
freeze reads metadata and writes one pin. Reading bytes, building and hashing the archive all happen after commit.
"""

import time
import uuid
from dataclasses import dataclass

from processing.kernel.bundles import Bundle, BundleFile, bundle_build, manifest_build
from workspace import facade as workspace


@dataclass(frozen=True)
class Capture:
    bundle: Bundle
    generation: int
    fence_seconds: float
    documents: tuple[tuple[str, int], ...] = ()  # (path, version) of each text document frozen
    entry_path: str = ""
    compiler: str | None = None  # a LaTeX project's, after the build's override

    @property
    def captured(self) -> dict:
        """What the job records of its input: the generation, each text document's version, and what a warm
        start must match (the entry file and compiler)."""
        return {
            "generation": self.generation,
            "documents": [list(document) for document in self.documents],
            "build": {"entry": self.entry_path, "compiler": self.compiler},
        }


def project_capture(
    *, project_id: uuid.UUID, compiler_override: str | None = None, version: int | None = None
) -> Capture:
    """Capture the project as one coherent generation into a ``project-bundle/v1``; with ``version``, the files
    as that version of its history left them (a label's "the text sent to the journal")."""
    started = time.perf_counter()
    if version is not None:
        snapshot = workspace.version_snapshot_freeze(project_id=project_id, number=version)
    else:
        snapshot = workspace.snapshot_freeze(project_id=project_id)
    fence_seconds = time.perf_counter() - started
    try:
        files = [
            BundleFile(file.path, file.kind, data, file.sha256)
            for file, data in workspace.snapshot_contents(snapshot=snapshot)
        ]
    finally:
        workspace.pin_release(pin_id=snapshot.pin_id)
    settings = {"compiler": compiler_override or snapshot.compiler} if snapshot.project_type == "latex" else {}
    manifest = manifest_build(
        project_type=snapshot.project_type,
        entry_path=snapshot.entry_path,
        settings=settings,
        generation=snapshot.generation,
        source_epoch=int(snapshot.content_changed_at.timestamp()),
        files=files,
    )
    documents = tuple((file.path, file.version) for file in snapshot.files if file.kind == "text")
    return Capture(
        bundle=bundle_build(manifest, files),
        generation=snapshot.generation,
        fence_seconds=fence_seconds,
        documents=documents,
        entry_path=snapshot.entry_path,
        compiler=settings.get("compiler"),
    )
