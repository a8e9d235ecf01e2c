"""Driving indexing jobs through the real claim → stage → deliver → finalize services."""

import json

from processing.finalization.finalize import job_finalize
from processing.models import ProcessingJob
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, delivery_accept
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import stage

OPERATION = "pdf.index.text/v1"


def pages_json(texts: list[str]) -> bytes:
    pages = [{"number": number, "text": text} for number, text in enumerate(texts, start=1)]
    return json.dumps(
        {
            "schema": "pdf-pages/v1",
            "page_count": len(texts),
            "indexed_pages": len(texts),
            "truncated": False,
            "pages": pages,
        }
    ).encode()


def index_claim(job_id):
    """Claim this queued indexing job (it must be the oldest queued one) with a fresh session."""
    session = WorkerSessionFactory(processors={OPERATION: 1})
    claim = claim_acquire(session_id=session.pk, offers={OPERATION: 1})
    assert claim is not None and str(claim.job_id) == str(job_id), "expected to claim that job"
    return claim


def index_finish(claim, texts: list[str]) -> ProcessingJob:
    stage(claim, "pages", "application/json", "pages.json", pages_json(texts))
    job_id, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics(log="indexed"))
    job_finalize(job_id=job_id, token=token)
    return ProcessingJob.objects.get(pk=job_id)


def index_to_success(job_id, texts: list[str]) -> ProcessingJob:
    return index_finish(index_claim(job_id), texts)
