"""The project's output: what Processing publishes of a successful build for every member to see.

Processing stores the bytes (``output_content_store``, outside any transaction), then, in the transaction
in which the build succeeds, publishes the output (``output_publish``): so an output exists exactly when its
build succeeded. Publication takes the project fence (after the job's row: see docs/architecture.md §3), so
it is ordered with the project's deletion, and replaces the current output only with one of the same or a
newer capture: a build of an older generation that finishes late changes nothing.
"""

import json
import uuid
from dataclasses import dataclass

from django.db import connection

from access import facade as access
from workspace import signals
from workspace.models import OutputArtifact, ProjectOutput
from workspace.services.content import fence_enter
from workspace.storage import asset_storage

_OUTPUTS = ProjectOutput._meta.db_table


@dataclass(frozen=True)
class OutputFile:
    """One file of a build's output whose bytes are stored already (``sha256`` names them)."""

    role: str
    media_type: str
    filename: str
    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class BuildOutput:
    job_id: uuid.UUID
    operation: str
    built_by_id: int
    generation: int
    documents: list
    words: int | None
    diagnostics: list
    log: str
    files: tuple[OutputFile, ...]


def output_content_store(*, data: bytes) -> str:
    """Store an output file's bytes (outside any transaction); returns their digest."""
    return asset_storage().put(data)


def output_content_present(*, sha256: str) -> bool:
    """Whether these bytes are stored, which also keeps them another grace from the collector (as ``put``
    would): a reused build's output names them only once its transaction commits."""
    return asset_storage().touch(sha256)


def output_publish(*, project_id: uuid.UUID, output: BuildOutput) -> bool:
    """Inside the caller's transaction: make ``output`` the project's current one unless the current one is
    of a newer capture, or the project is gone. Returns whether it did."""
    try:
        fence_enter(project_id)
    except access.ProjectNotFound:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {_OUTPUTS} (project_id, job_id, operation, built_by_id, built_at, generation, documents,
                                    words, diagnostics, log)
            VALUES (%s, %s, %s, %s, now(), %s, %s::jsonb, %s, %s::jsonb, %s)
            ON CONFLICT (project_id) DO UPDATE SET
                job_id = EXCLUDED.job_id, operation = EXCLUDED.operation, built_by_id = EXCLUDED.built_by_id,
                built_at = EXCLUDED.built_at, generation = EXCLUDED.generation, documents = EXCLUDED.documents,
                words = EXCLUDED.words, diagnostics = EXCLUDED.diagnostics, log = EXCLUDED.log
            WHERE {_OUTPUTS}.generation <= EXCLUDED.generation
            RETURNING project_id
            """,  # noqa: S608  our table; every value is a parameter
            [
                project_id,
                output.job_id,
                output.operation,
                output.built_by_id,
                output.generation,
                _json(output.documents),
                output.words,
                _json(output.diagnostics),
                output.log,
            ],
        )
        if cursor.fetchone() is None:
            return False
    OutputArtifact.objects.filter(output_id=project_id).delete()
    OutputArtifact.objects.bulk_create(
        [
            OutputArtifact(
                output_id=project_id,
                role=file.role,
                media_type=file.media_type,
                filename=file.filename,
                size_bytes=file.size_bytes,
                sha256=file.sha256,
            )
            for file in output.files
        ]
    )
    signals.output_published_on_commit(project_id=project_id)
    return True


def _json(value) -> str:
    return json.dumps(value)
