"""Driving jobs through the real services the protocol uses, for tests that need a finished job."""

import hashlib
import io
import json

from pypdf import PdfWriter

from processing.finalization.finalize import job_finalize
from processing.models import ProcessingJob
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, delivery_accept
from processing.queue.staging import output_stage
from tests.processing.factories import WorkerSessionFactory


def pdf_bytes(pages: int = 1) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def stage(claim, role: str, media_type: str, filename: str, data: bytes):
    return output_stage(
        claim_id=claim.claim_id,
        role=role,
        media_type=media_type,
        filename=filename,
        data=data,
        expected_sha256=hashlib.sha256(data).hexdigest(),
    )


def build_claimed(job_id, *, session=None):
    """Claim the queued build ``job_id`` (the oldest queued) with a fresh session, as an agent would."""
    session = session or WorkerSessionFactory(processors={"latex.compile.pdf/v1": 1})
    claim = claim_acquire(session_id=session.pk, offers={"latex.compile.pdf/v1": 1})
    assert claim is not None and str(claim.job_id) == str(job_id)
    return claim


def build_finished(
    claim, *, pdf: bytes | None = None, synctex: bytes | None = None, words: int | None = None,
    diagnostics: Diagnostics | None = None,
) -> ProcessingJob:  # fmt: skip
    """Stage a PDF and a log (and SyncTeX data, a word count) on the claim, deliver and finalize it."""
    stage(claim, "pdf", "application/pdf", "main.pdf", pdf or pdf_bytes())
    stage(claim, "log", "text/plain", "main.log", b"This is pdfTeX\nOutput written on main.pdf\n")
    if synctex is not None:
        stage(claim, "synctex", "application/gzip", "main.synctex.gz", synctex)
    if words is not None:
        stage(claim, "report", "application/json", "report.json", json.dumps({"words": words}).encode())
    accepted_job, token = delivery_accept(
        claim_id=claim.claim_id, diagnostics=diagnostics or Diagnostics(log="build log")
    )
    job_finalize(job_id=accepted_job, token=token)
    return ProcessingJob.objects.get(pk=claim.job_id)


def build_to_success(job_id, *, session=None, **finish) -> ProcessingJob:
    """Claim the queued job with a fresh session, then ``build_finished`` it."""
    return build_finished(build_claimed(job_id, session=session), **finish)
