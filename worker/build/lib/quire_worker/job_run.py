"""Running one claim: download and verify the input, run the processor, upload, deliver or fail."""

import logging
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from quire_worker.client import CoreClient, CoreError, CoreUnavailable
from quire_worker.contracts import (
    Diagnostics,
    Executor,
    ExecutorError,
    FailureClass,
    Limits,
    Processor,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.unpack import input_materialize, input_verify

logger = logging.getLogger(__name__)


@dataclass
class ActiveClaim:
    claim: dict
    cancel: threading.Event = field(default_factory=threading.Event)
    lost: threading.Event = field(default_factory=threading.Event)
    phase: str = "processing"

    @property
    def claim_id(self) -> str:
        return self.claim["claim_id"]


def _diagnostics_payload(diagnostics: Diagnostics) -> dict:
    return {
        "log": diagnostics.log,
        "entries": [
            {"file": d.file, "line": d.line, "severity": d.severity, "message": d.message[:2000]}
            for d in diagnostics.entries[:1000]
        ],
    }


def _limits_for(claim: dict) -> Limits:
    granted = claim.get("limits", {})
    return Limits(
        wall_seconds=float(granted.get("wall_seconds", Limits.wall_seconds)),
        cpu_seconds=int(granted.get("wall_seconds", Limits.cpu_seconds)),
        output_bytes=int(granted.get("artifact_bytes", Limits.output_bytes)),
        log_bytes=int(granted.get("diagnostic_bytes", Limits.log_bytes)),
    )


class JobRun:
    def __init__(
        self,
        *,
        client: CoreClient,
        active: ActiveClaim,
        processor: Processor,
        executor: Executor,
        work_root: Path,
        successor_wanted: Callable[[], bool] = lambda: False,
    ):
        self.client, self.active, self.processor, self.executor = client, active, processor, executor
        # Asked at delivery: may this run's permit go straight to the next claim? Core answers with it.
        self.successor_wanted = successor_wanted
        self.successors: list[dict] = []
        self.work = work_root / active.claim_id
        self.log = {
            "job": active.claim["job_id"],
            "claim": active.claim_id,
            "operation": active.claim["operation"],
            "attempt": active.claim["attempt"],
            "processor_contract": processor.contract,
        }
        self.timings_ms: dict[str, float] = {}

    @contextmanager
    def _timed(self, step: str):
        """Where a job's time goes on the agent, logged with its delivery (``<step>_ms``)."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings_ms[f"{step}_ms"] = round((time.perf_counter() - started) * 1000, 1)

    def execute(self) -> None:
        try:
            self._execute()
        except CoreError as exc:
            logger.warning("core refused the claim's call; giving it up", extra={**self.log, "code": exc.code})
        except CoreUnavailable:
            logger.error("core unreachable; the lease will expire and the job will be retried", extra=self.log)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)

    def _execute(self) -> None:
        try:
            with self._timed("input"):  # download, verify, lay out
                input_dir, output_dir = self._prepare()
            with self._timed("processor"):
                result = self._run_processor(input_dir, output_dir)
        except ProcessorFailure as failure:
            self._report_failure(failure)
            return
        if self._stopped():
            return
        self.active.phase = "uploading_result"
        with self._timed("upload"):
            self._upload_all(result.outputs)
        offers = {self.active.claim["operation"]: 1} if self.successor_wanted() else None
        with self._timed("delivery"):
            outcome = self.client.deliver(
                claim_id=self.active.claim_id, diagnostics=_diagnostics_payload(result.diagnostics), offers=offers
            )
        self.successors = outcome.get("claims") or []
        logger.info("delivered", extra={**self.log, "job_state": outcome.get("job_state"), **self.timings_ms})

    def _upload_all(self, outputs) -> None:
        """Upload the outputs side by side: a build has a PDF and a log."""

        tickets = self.active.claim.get("uploads") or {}  # issued with the claim, one per declared role

        def upload(output) -> None:
            self.client.upload_output(
                claim_id=self.active.claim_id,
                role=output.role,
                media_type=output.media_type,
                filename=output.filename,
                data=output.path.read_bytes(),
                ticket=tickets.get(output.role),
            )

        if len(outputs) <= 1:
            for output in outputs:
                upload(output)
            return
        with ThreadPoolExecutor(max_workers=min(len(outputs), 4), thread_name_prefix="upload") as pool:
            for done in [pool.submit(upload, output) for output in outputs]:
                done.result()  # re-raises the first refusal or unavailability

    def _prepare(self) -> tuple[Path, Path]:
        """Download and verify the input and lay it out; ProcessorFailure when that fails."""
        claim = self.active.claim
        with self._timed("download"):
            data = self.client.download_input(ticket=claim["input"]["download"])
        input_verify(data, sha256=claim["input"]["sha256"], size=claim["input"]["size"])
        input_dir, output_dir = self.work / "input", self.work / "output"
        try:
            self.work.parent.mkdir(parents=True, exist_ok=True)
            # Only the agent may enter: the input is a user's document. The sandbox reaches the
            # input and output directories through its own binds, never through this one.
            self.work.mkdir(mode=0o700)
            output_dir.mkdir()
            input_materialize(data, schema=claim["input"]["schema"], destination=input_dir)
        except OSError as exc:
            logger.exception("could not lay out the input", extra=self.log)
            message = "The worker could not store the input."
            raise ProcessorFailure(FailureClass.TRANSIENT_INFRASTRUCTURE, "agent_storage_failed", message) from exc
        return input_dir, output_dir

    def _run_processor(self, input_dir: Path, output_dir: Path) -> ProcessorResult:
        """The processor's result; its unanticipated exceptions become classified failures."""
        claim = self.active.claim
        try:
            return self.processor.run(
                input_dir=input_dir,
                output_dir=output_dir,
                request=claim["request"],
                limits=_limits_for(claim),
                cancel=self.active.cancel,
                executor=self.executor,
            )
        except ProcessorFailure:
            raise
        except ExecutorError as exc:
            # The host could not run the sandbox: another worker, or this one later, may.
            logger.exception("executor failed", extra=self.log)
            message = "The worker could not start the sandbox."
            raise ProcessorFailure(FailureClass.TRANSIENT_INFRASTRUCTURE, "executor_failed", message) from exc
        except Exception as exc:
            # Retrying a processor bug on the same input only fails again, so the job ends here.
            logger.exception("processor crashed", extra=self.log)
            message = "The processor failed unexpectedly."
            raise ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, "processor_crashed", message) from exc

    def _stopped(self) -> bool:
        """After the processor returns: a lost claim reports nothing; a cancelled one reports the cancellation."""
        if self.active.lost.is_set():
            logger.warning("claim lost while running; dropping the result", extra=self.log)
            return True
        if self.active.cancel.is_set():
            self._report_failure(
                ProcessorFailure(FailureClass.WORKER_INTERRUPTED, "cancelled", "Cancelled on request.")
            )
            return True
        return False

    def _report_failure(self, failure: ProcessorFailure) -> None:
        if self.active.lost.is_set():
            return
        if self.active.cancel.is_set():
            failure = ProcessorFailure(
                FailureClass.WORKER_INTERRUPTED, "cancelled", "Cancelled on request.", failure.diagnostics
            )
        outcome = self.client.fail(
            claim_id=self.active.claim_id,
            failure_class=failure.failure_class,
            code=failure.code,
            message=failure.message,
            diagnostics=_diagnostics_payload(failure.diagnostics),
        )
        state = outcome.get("job_state")
        logger.info(
            "reported failure",
            extra={**self.log, "class": failure.failure_class, "job_state": state, **self.timings_ms},
        )
