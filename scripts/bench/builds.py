"""Project builds for `make bench-latex`: the full path against the same processor alone, build by build.

Full: ``POST /v1/projects/{id}/builds`` → capture → queue → agent (download, unpack, processor, upload,
delivery) → finalize → the client sees the job succeed and downloads its PDF (the client's clock).

Raw: the very bundle that full build captures (``processing.submission.capture.project_capture`` just before the
submission, checked byte for byte against the job's input digest; laid out by the agent's own
``input_materialize``), built by the processor the agent discovers (``processors_available``: same
class, same TeX Live / Typst, same options), with the agent's executor (bubblewrap), the limits the
claim grants (``claim_limits``: ``job_run._limits_for`` on the deployment's limits) and a job directory
beside the agent's own, timed around ``processor.run`` alone, as the agent's ``processor_ms`` is. Each
raw build runs right before (even builds) or right after (odd builds) its full build, so both sides see
the same machine, the same warm caches and the same bytes, and neither always follows the other; the
first repetition warms both up and is dropped. The overhead is then Quire's path alone: the API,
capture, queue, transfer, finalization and the client's waits and PDF download.

Figures per document (``<kind>`` is ``latex`` or ``typst``):
  <kind>_raw_ms_p50_<doc>            the processor alone in bubblewrap
  <kind>_full_ms_p50_<doc>           API submit to PDF downloaded
  <kind>_overhead_ms_p50_<doc>       the median over a repetition's builds of (full - raw) of the same build
  <kind>_full_vs_raw_ratio_<doc>     full p50 / raw p50
  <kind>_phase_ms_p50_<phase>_<doc>  where the full path's time goes (``PHASES``), from the job's, attempt's
                                     and staged outputs' timestamps and the client's clock (same machine)
"""

import itertools
import json
import os
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from scripts.bench.harness import report, rounds

LATEX = "latex.compile.pdf/v1"
TYPST = "typst.compile.pdf/v1"
BUNDLE_SCHEMA = "project-bundle/v1"
OVERHEAD_TARGET_MS = 150
# Polling instead of waiting: each poll is a request served on the two cores that also run the build, so a
# polling client slows the very build being timed, and sees the end up to one interval late.
POLL_SECONDS = float(os.environ.get("BENCH_POLL_SECONDS", "0"))
CLIENT = f"polling every {POLL_SECONDS * 1000:g} ms" if POLL_SECONDS else "waiting (?wait=20)"
TERMINAL = ("succeeded", "failed", "cancelled", "expired")
PHASES = ("submit_to_queued", "queued_to_claimed", "claimed_to_first_output", "between_outputs",
          "last_output_to_delivered", "delivered_to_succeeded", "succeeded_to_seen", "pdf_download")  # fmt: skip


@contextmanager
def build_service(*, extra_env: dict[str, str] | None = None) -> Iterator[tuple[str, Path]]:
    """A benchmark database, one web server (2 processes) and one agent (1 slot per operation, bubblewrap) that
    builds LaTeX and Typst: yields the server's URL and a scratch directory, and takes it all down after."""
    from scripts.bench.harness import bench_database, django_setup
    from scripts.bench.processes import agents, deployment_write, web_server

    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        limits = {"running_jobs_per_requester": 100, "active_jobs_per_requester": 1000}
        deployment = str(deployment_write(directory, operations=[LATEX, TYPST], limits=limits))
        os.environ["QUIRE_DEPLOYMENT_FILE"] = deployment
        django_setup()
        env = {
            "QUIRE_DEPLOYMENT_FILE": deployment,
            "DATABASE_POOL": "true",
            "DEBUG": "false",
            "QUIRE_LOG_LEVEL": "WARNING",
            "OFFICE_WARM_ON_START": "false",
            **(extra_env or {}),
        }
        with (
            web_server(env, workers=2, log=directory / "web.log") as url,
            agents(url, directory, count=1, slots=1, operations=f"{LATEX},{TYPST}"),
        ):
            yield url, directory


def author(url: str, *, ca_file: str | None = None):
    """A user with an API token, and an HTTP client speaking as that user (over HTTPS: verified by ``ca_file``)."""
    from django.contrib.auth import get_user_model

    from access.services import token_create
    from quire_worker.client import HttpCoreClient

    user = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:8]}", password="x" * 12)
    _, token = token_create(user_id=user.pk, name="bench")
    return user, HttpCoreClient(url, token, ca_file=ca_file)


def submit(client, project_id, key: str | None = None) -> dict:
    data = client._call(
        "POST",
        f"/v1/projects/{project_id}/builds",
        body=b"{}",
        headers={"Content-Type": "application/json", "Idempotency-Key": key or uuid.uuid4().hex},
    )
    return json.loads(data)


def job_get(client, job_id: str, *, wait: float = 0) -> dict:
    query = f"?wait={wait:g}" if wait else ""
    return json.loads(client._call("GET", f"/v1/processing/jobs/{job_id}{query}", timeout=wait + 30))


def until_ended(client, job: dict, timeout: float = 120.0) -> dict:
    """The job once it has ended: waiting on ``?wait=20`` (or polling every BENCH_POLL_SECONDS)."""
    deadline = time.monotonic() + timeout
    while job["state"] not in TERMINAL:
        if time.monotonic() > deadline:  # e.g. the agent found no TeX Live and exited (see agent-0.log)
            raise RuntimeError(f"job {job['id']} still {job['state']} after {timeout:.0f} s")
        if POLL_SECONDS:
            time.sleep(POLL_SECONDS)
            job = job_get(client, job["id"])
        else:
            job = job_get(client, job["id"], wait=20)
    return job


def until_downloaded(client, job: dict) -> tuple[str, float]:
    """Wait for the build to succeed, then download its PDF; the job id and when the client saw it succeed."""
    job = until_ended(client, job)
    if job["state"] != "succeeded":
        raise RuntimeError(f"build {job['id']} {job['state']}: {job['failure']}")
    seen_at = time.time()
    pdf = next(a for a in job["artifacts"] if a["role"] == "pdf")
    client._call("GET", pdf["url"])
    return job["id"], seen_at


class RawSide:
    """The agent's processors, executor and claim limits, run here on the bundle a full build captured."""

    def __init__(self, root: Path, operations: list[str]):
        from processing.kernel.configuration import limits
        from quire_worker.discovery import processors_available
        from quire_worker.sandbox import BwrapExecutor
        from scripts.bench_latex_raw import claim_limits

        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        found = processors_available(wanted=set(operations), test_operations=False)
        self.processors = {processor.operation: processor for processor in found}
        if missing := set(operations) - set(self.processors):
            raise RuntimeError(f"no processor for {', '.join(sorted(missing))} on this host")
        self.executor = BwrapExecutor()
        self.limits = claim_limits(limits())  # the deployment's, as Core puts them in every claim

    def build_ms(self, operation: str, bundle: bytes, warm_start: bytes | None = None) -> float:
        """Milliseconds of ``processor.run`` on ``bundle`` (and the warm start the full build starts from), laid
        out as the agent lays out a claim's input."""
        from quire_worker.unpack import input_materialize

        work = Path(tempfile.mkdtemp(prefix="raw-", dir=self.root))  # mode 0700, as the agent's job directory
        try:
            input_dir, output_dir = work / "input", work / "output"
            output_dir.mkdir()
            input_materialize(bundle, schema=BUNDLE_SCHEMA, destination=input_dir)
            # As the claim's request for a build: builds take no options.
            request = {
                "operation": operation,
                "input_schema": BUNDLE_SCHEMA,
                "options": {},
                "input_profile": "",
                "filename": "",
                "attempt": 1,
            }
            if warm_start is not None:
                (work / "warm-start.tar.gz").write_bytes(warm_start)
                request["warm_start"] = str(work / "warm-start.tar.gz")  # as the agent passes it
            started = time.perf_counter()
            self.processors[operation].run(
                input_dir=input_dir,
                output_dir=output_dir,
                request=request,
                limits=self.limits,
                cancel=threading.Event(),
                executor=self.executor,
            )
            return (time.perf_counter() - started) * 1000
        finally:
            shutil.rmtree(work, ignore_errors=True)


@dataclass
class Paired:
    """Per measured repetition: the medians of each side, of the per-build differences, and the timelines."""

    raw: list[float] = field(default_factory=list)
    full: list[float] = field(default_factory=list)
    overhead: list[float] = field(default_factory=list)
    timelines: list[list[tuple]] = field(default_factory=list)  # (job id, submitted, seen succeeded, downloaded)
    project_id: str = ""


def paired_builds(client, user, raw_side: RawSide, *, project_type: str, source: str, edit, n: int) -> Paired:
    """Rounds (``rounds()``: warm-ups, then BENCH_REPS measured) of ``n`` builds, each built raw and in full.

    ``edit(source, tag)`` changes a comment before each build, so that no build is a reuse hit."""
    from processing.models import ProcessingJob
    from processing.operations.builds import BUILDS
    from processing.submission.capture import project_capture
    from workspace import services as workspace
    from workspace.starters import DEFAULT_ENTRY

    project = workspace.project_create(actor_id=user.pk, name="bench", project_type=project_type)
    operation, entry = BUILDS[project_type], DEFAULT_ENTRY[project_type]
    result = Paired(project_id=str(project.pk))
    for rep, counted in enumerate(rounds()):
        raw, full, builds = [], [], []
        for index in range(n):
            workspace.file_write(
                actor_id=user.pk, project_id=project.pk, path=entry, data=edit(source, f"{rep}-{index}").encode()
            )
            bundle = project_capture(project_id=project.pk).bundle  # what the submission will capture
            warm_blob_id, warm_start = _warm_start_next(project.pk)  # what a LaTeX build will start from
            if raw_first := index % 2 == 0:
                raw.append(raw_side.build_ms(operation, bundle.data, warm_start))
            started, submitted_at = time.perf_counter(), time.time()
            job_id, seen_at = until_downloaded(client, submit(client, project.pk))
            full.append((time.perf_counter() - started) * 1000)
            builds.append((job_id, submitted_at, seen_at, time.time()))
            if not raw_first:
                raw.append(raw_side.build_ms(operation, bundle.data, warm_start))
            captured = ProcessingJob.objects.values_list("input_digest", "warm_start_blob_id").get(pk=job_id)
            if captured != (bundle.sha256, warm_blob_id):
                raise RuntimeError(f"build {job_id} captured other bytes than the raw side built")
        if counted:
            result.raw.append(statistics.median(raw))
            result.full.append(statistics.median(full))
            result.overhead.append(statistics.median(f - r for f, r in zip(full, raw, strict=True)))
            result.timelines.append(builds)
    return result


def _warm_start_next(project_id) -> tuple[int | None, bytes | None]:
    """The warm start the project's next LaTeX build will start from (the bench's one user builds it alone):
    the newest ``warm`` result of its builds, and its bytes."""
    from processing.kernel.blobs import blob_read
    from processing.models import ProcessingArtifact

    newest = (
        ProcessingArtifact.objects.filter(role="warm", job__project_id=project_id, job__state="succeeded")
        .order_by("-job__completed_at")
        .values_list("blob_id", flat=True)
        .first()
    )
    return (newest, blob_read(newest)) if newest is not None else (None, None)


def report_paired(kind: str, name: str, label: str, paired: Paired, n: int) -> dict:
    """The raw, full, overhead, ratio and phase figures of one document; returns the overhead's line."""
    report(
        f"{kind}_raw_ms_p50_{name}",
        paired.raw,
        unit="ms",
        n=n,
        config=f"{label}: the agent's processor alone in bubblewrap, on the full build's own bundle",
    )
    report(
        f"{kind}_full_ms_p50_{name}",
        paired.full,
        unit="ms",
        n=n,
        config=f"{label}: API submit to PDF downloaded, client {CLIENT}",
    )
    target = f"target <= {OVERHEAD_TARGET_MS} ms"
    line = report(
        f"{kind}_overhead_ms_p50_{name}",
        paired.overhead,
        unit="ms",
        n=n,
        config=f"{label}: median of full - raw of the same build, {target}",
    )
    report(
        f"{kind}_full_vs_raw_ratio_{name}",
        [f / r for f, r in zip(paired.full, paired.raw, strict=True)],
        unit="x",
        n=n,
        config=f"{label}: full p50 / raw p50",
    )
    per_rep = [_phases_ms(builds) for builds in paired.timelines]
    for phase in PHASES:
        report(
            f"{kind}_phase_ms_p50_{phase}_{name}",
            [rep[phase] for rep in per_rep],
            unit="ms",
            n=n,
            config="phase of the full path, from job/attempt/output timestamps",
        )
    return line


def _phases_ms(builds: list[tuple]) -> dict[str, float]:
    """The median of each phase over these builds, in milliseconds."""
    from processing.models import ProcessingAttempt, ProcessingJob, StagedOutput

    per_phase: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for job_id, submitted_at, seen_at, downloaded_at in builds:
        job = ProcessingJob.objects.get(pk=job_id)
        attempt = ProcessingAttempt.objects.get(job=job, state="delivered")
        staged = sorted(o.created_at.timestamp() for o in StagedOutput.objects.filter(attempt=attempt))
        moments = [
            submitted_at,
            job.queued_at.timestamp(),
            attempt.started_at.timestamp(),
            staged[0],
            staged[-1],
            attempt.ended_at.timestamp(),
            job.completed_at.timestamp(),
            seen_at,
            downloaded_at,
        ]
        for phase, (start, end) in zip(PHASES, itertools.pairwise(moments), strict=True):
            per_phase[phase].append((end - start) * 1000)
    return {phase: statistics.median(values) for phase, values in per_phase.items()}


def target_line(line: dict, target: float) -> None:
    verdict = "met" if line["value"] <= target else "MISSED"
    print(f"  target {line['figure']} <= {target:g} {line['unit']}: {verdict} ({line['value']:.1f} {line['unit']})")
