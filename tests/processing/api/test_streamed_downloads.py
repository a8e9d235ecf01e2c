"""Artifact and library downloads are streamed from the database a chunk at a time, with Range: eight large
downloads at once keep a real server's memory bounded, and a range is the bytes it names."""

import hashlib
import io
import os
import threading
import urllib.request
from pathlib import Path

import pytest
from pypdf import PdfWriter

from processing.submission.submit import job_submit
from tests.factories import ProjectFactory, bearer_token_for
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success

pytestmark = pytest.mark.django_db(transaction=True)

LARGE_BYTES = 40 * 1024 * 1024
DOWNLOADS = 8
# Eight downloads read whole would hold 320 MiB (more, with copies); streamed, a few chunks each.
GROWTH_BOUND_BYTES = 64 * 1024 * 1024


def large_pdf() -> bytes:
    """A valid PDF of about ``LARGE_BYTES``: a page and an incompressible attachment."""
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.add_attachment("noise.bin", os.urandom(LARGE_BYTES))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _server_worker_pid(url: str) -> int:
    """The one gunicorn worker behind ``url`` (a child of the master bound to its port)."""
    port = url.rsplit(":", 1)[-1].strip("/")
    masters, parents = set(), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue
        if b"gunicorn" not in b" ".join(arguments):
            continue
        parents[int(entry.name)] = int(
            next(line for line in status.splitlines() if line.startswith("PPid:")).split()[1]
        )
        if any(argument.endswith(f":{port}".encode()) for argument in arguments):
            masters.add(int(entry.name))
    [worker] = [pid for pid, parent in parents.items() if parent in masters]
    return worker


def _peak_resident_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1]) * 1024


def test_eight_large_artifact_downloads_at_once_keep_the_servers_memory_bounded(live_quire, owner):
    project = ProjectFactory(owner=owner, starter=True)
    job = job_submit(
        actor_id=owner.pk, operation_name="latex.compile.pdf/v1", idempotency_key="big", project_id=project.pk
    )
    pdf = large_pdf()
    finished = build_to_success(job.job_id, pdf=pdf)
    artifact = finished.artifacts.get(role="pdf")
    url = f"{live_quire}/v1/processing/jobs/{job.job_id}/artifacts/{artifact.pk}"
    token = bearer_token_for(owner)
    worker = _server_worker_pid(live_quire)
    before = _peak_resident_bytes(worker)
    digests, start = [], threading.Barrier(DOWNLOADS)

    def download() -> None:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})  # noqa: S310  the test's own server
        start.wait()
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
            digest = hashlib.sha256()
            while chunk := response.read(64 * 1024):
                digest.update(chunk)
            digests.append(digest.hexdigest())

    threads = [threading.Thread(target=download) for _ in range(DOWNLOADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)

    assert digests == [hashlib.sha256(pdf).hexdigest()] * DOWNLOADS
    growth = _peak_resident_bytes(worker) - before
    assert growth < GROWTH_BOUND_BYTES, f"the server's peak memory grew by {growth / 2**20:.0f} MiB"


@pytest.mark.django_db
def test_an_artifact_answers_a_range_with_those_bytes_and_its_etag_with_304(owner, owner_client):
    project = ProjectFactory(owner=owner, starter=True)
    job_id = submit_build(owner_client, project).json()["id"]
    job = build_to_success(job_id)
    artifact = job.artifacts.get(role="pdf")
    url = f"/v1/processing/jobs/{job_id}/artifacts/{artifact.pk}"
    whole = b"".join(owner_client.get(url).streaming_content)

    ranged = owner_client.get(url, HTTP_RANGE="bytes=5-14")
    unchanged = owner_client.get(url, HTTP_IF_NONE_MATCH=f'"{artifact.sha256}"')

    assert (ranged.status_code, ranged["Content-Range"]) == (206, f"bytes 5-14/{len(whole)}")
    assert b"".join(ranged.streaming_content) == whole[5:15]
    assert unchanged.status_code == 304
    assert hashlib.sha256(whole).hexdigest() == artifact.sha256
