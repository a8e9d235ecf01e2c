"""The ``pdf.index.text/v1`` finalizer: index a version's pages, then advance search only if still requested.

Validation (size, digest, JSON shape) runs without locks; the writes run in
the finalization transaction (``Publication.before_publish``):

* index entries are keyed by (version, page) and written with an upsert, so a
  second run — a recovered finalization, a repeated delivery — changes nothing;
* the document's searchable version moves to this version only through a
  conditional update requiring that it is still the requested one, so an
  obsolete version that finishes last never becomes current;
* when it moved, ``document.version.searchable`` is emitted in that transaction.

``LibraryConfig.ready`` registers ``index_library_version`` for the operation with Processing's
finalizer registry (``processing.facade.finalizer_register``); Processing never names it.
"""

import json

from library import selectors
from library.services.documents import pages_index, searchable_advance
from processing import facade as processing
from processing.facade import FailureClass, FinalizationRejected, Publication, StagedOutput
from quire_wire import PDF_PAGES_SCHEMA

PAGES_SCHEMA = PDF_PAGES_SCHEMA
SEARCHABLE_EVENT = "document.version.searchable"
MAX_RETRY_CHAIN = 50  # retries of retries; far more than any operator clicks


def _violation(code: str, message: str) -> FinalizationRejected:
    return FinalizationRejected(FailureClass.INTERNAL_CONTRACT_VIOLATION, code, message)


def pages_parse(data: bytes, *, page_count: int) -> list[tuple[int, str]]:
    """``[(page number, text)]`` from the processor's ``pages`` output, or FinalizationRejected."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _violation("pages_invalid", "The extracted pages are not JSON.") from exc
    if not isinstance(document, dict) or document.get("schema") != PAGES_SCHEMA:
        raise _violation("pages_invalid", f"The extracted pages are not {PAGES_SCHEMA}.")
    pages = document.get("pages")
    if not isinstance(pages, list):
        raise _violation("pages_invalid", "The extracted pages carry no page list.")
    parsed: dict[int, str] = {}
    for page in pages:
        number = page.get("number") if isinstance(page, dict) else None
        text = page.get("text") if isinstance(page, dict) else None
        valid_number = isinstance(number, int) and not isinstance(number, bool) and 1 <= number <= page_count
        if not valid_number or not isinstance(text, str) or number in parsed:
            raise _violation("pages_invalid", "A page entry has no valid number or text.")
        parsed[number] = text
    return sorted(parsed.items())


def _version_indexed_by(job):
    """The library version this job indexes: its own, or for a manual retry, the one of the job it retries."""
    job_id = job.pk
    for _ in range(MAX_RETRY_CHAIN):
        version = selectors.version_of_job(job_id=job_id)
        if version is not None:
            return version
        job_id = processing.job_retried(job_id=job_id)
        if job_id is None:
            return None
    return None


def index_library_version(job, staged: list[StagedOutput]) -> Publication:
    """The finalizer of PDF ingestion: verify the staged pages and return the publication that indexes them and
    advances the searchable version if it is still the requested one (see the module docstring)."""
    version = _version_indexed_by(job)
    if version is None:
        raise FinalizationRejected(
            FailureClass.INVALID_INPUT, "library_version_gone", "The library version no longer exists."
        )
    by_role = {output.role: output for output in staged}
    if set(by_role) != {"pages"}:
        raise _violation("missing_output", "Indexing must deliver exactly the pages output.")
    pages = pages_parse(processing.staged_bytes_verified(job, by_role["pages"]), page_count=version.page_count)

    def index_and_advance(locked_job) -> dict:
        index_version(version, pages, project_id=locked_job.project_id)
        return {}

    return Publication(publish=[by_role["pages"]], before_publish=index_and_advance)


def index_version(version, pages: list[tuple[int, str]], *, project_id) -> bool:
    """Inside the caller's transaction: write the entries, advance if still requested; True when it advanced."""
    pages_index(version_id=version.id, pages=pages)
    advanced = searchable_advance(document_id=version.document_id, version_id=version.id)
    if advanced:
        processing.outbox_emit(
            kind=SEARCHABLE_EVENT,
            payload={
                "project_id": str(project_id),
                "document_id": str(version.document_id),
                "version_id": str(version.id),
                "job_id": str(version.index_job_id),
            },
        )
    return advanced
