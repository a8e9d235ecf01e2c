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

from quire_wire.text import storable
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
    # Set as the claim's final call (delivery or failure) goes out: Core may end the claim before the answer is
    # back, and a heartbeat in flight then hears "claim lost" for a claim that ended as it should.
    finishing: threading.Event = field(default_factory=threading.Event)
    phase: str = "processing"

    @property
    def claim_id(self) -> str:
        return self.claim["claim_id"]


# Core's answers to a claim's call that mean the claim is no longer this agent's: nothing more to report.
CLAIM_GONE_CODES = frozenset({"claim_lost", "session_gone", "session_not_found"})


def _diagnostics_payload(diagnostics: Diagnostics) -> dict:
    """What the protocol carries of ``diagnostics``: every text storable, with a note when some were not."""
    replaced = 0

    def text(value: str | None) -> str | None:
        nonlocal replaced
        if value is None:
            return None
        cleaned, count = storable(value)
        replaced += count
        return cleaned

    entries = [
        {"file": text(d.file), "line": d.line, "severity": d.severity, "message": text(d.message[:2000])}
        for d in diagnostics.entries[:1000]
    ]
    log = text(diagnostics.log)
    if replaced:
        log += f"\n[Quire: {replaced} NUL or unpaired-surrogate characters were replaced by U+FFFD]\n"
    return {"log": log, "entries": entries}


def _storable(value: str) -> str:
    return storable(value)[0]


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
        self.warm_start: Path | None = None  # the claim's warm start, once downloaded and verified

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
        diagnostics = _diagnostics_payload(result.diagnostics)
        self.active.finishing.set()
        with self._timed("delivery"):
            try:
                outcome = self.client.deliver(claim_id=self.active.claim_id, diagnostics=diagnostics, offers=offers)
            except CoreError as refusal:
                if refusal.code in CLAIM_GONE_CODES:
                    raise
                # Left alone, the job would wait for its lease to expire and be retried into the same refusal.
                message = f"Core refused the result ({refusal.code}): {refusal.message}"
                failure = ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, "delivery_refused", message)
                self._report_failure(failure, diagnostics=diagnostics)
                return
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
        # All at once (a LaTeX build has five): one more round trip would be on the author's wait.
        with ThreadPoolExecutor(max_workers=min(len(outputs), 6), thread_name_prefix="upload") as pool:
            for done in [pool.submit(upload, output) for output in outputs]:
                done.result()  # re-raises the first refusal or unavailability

    def _report_refused_failure(self, report: dict, refusal: CoreError) -> dict:
        """Core refused a failure report: the failure still reaches the author, as theirs if Core takes its bare
        class, code and message, as a contract violation naming the refusal if not. Never left to lease expiry."""
        logger.warning("core refused the failure report", extra={**self.log, "code": refusal.code})
        bare = {**report, "message": report["message"][:2000], "diagnostics": {"log": "", "entries": []}}
        try:
            return self.client.fail(**bare)
        except CoreError as again:
            if again.code in CLAIM_GONE_CODES:
                raise
            message = f"Core refused the failure report ({again.code}): {again.message}"[:2000]
            return self.client.fail(
                **{**bare, "failure_class": FailureClass.INTERNAL_CONTRACT_VIOLATION, "code": "failure_refused",
                   "message": message}
            )  # fmt: skip

    def _prepare(self) -> tuple[Path, Path]:
        """Download and verify the input and lay it out; ProcessorFailure when that fails."""
        claim = self.active.claim
        # The warm start, if the claim offers one, comes down beside the input rather than after it.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warm-start") if claim.get("warm_start") else None
        pending = pool.submit(self._warm_start_downloaded) if pool is not None else None
        try:
            with self._timed("download"):
                data = self.client.download_input(ticket=claim["input"]["download"])
        finally:
            if pool is not None:
                pool.shutdown()
        warm_start_data = pending.result() if pending is not None else None
        input_verify(data, sha256=claim["input"]["sha256"], size=claim["input"]["size"])
        input_dir, output_dir = self.work / "input", self.work / "output"
        try:
            self.work.parent.mkdir(parents=True, exist_ok=True)
            # Only the agent may enter: the input is a user's document. The sandbox reaches the
            # input and output directories through its own binds, never through this one.
            self.work.mkdir(mode=0o700)
            output_dir.mkdir()
            input_materialize(data, schema=claim["input"]["schema"], destination=input_dir)
            if warm_start_data is not None:
                self.warm_start = self.work / "warm-start.tar.gz"
                self.warm_start.write_bytes(warm_start_data)
        except OSError as exc:
            logger.exception("could not lay out the input", extra=self.log)
            message = "The worker could not store the input."
            raise ProcessorFailure(FailureClass.TRANSIENT_INFRASTRUCTURE, "agent_storage_failed", message) from exc
        return input_dir, output_dir

    def _warm_start_downloaded(self) -> bytes | None:
        """The claim's warm start, if it has one that arrives intact. It only saves time: a warm start that cannot
        be had is left out, and the build starts clean."""
        offered = self.active.claim["warm_start"]
        try:
            with self._timed("warm_start_download"):
                data = self.client.download_warm_start(claim_id=self.active.claim_id)
            input_verify(data, sha256=offered["sha256"], size=offered["size"])
        except (CoreError, CoreUnavailable, ProcessorFailure):
            logger.warning("warm start unavailable; building from scratch", extra=self.log)
            return None
        return data

    def _run_processor(self, input_dir: Path, output_dir: Path) -> ProcessorResult:
        """The processor's result; its unanticipated exceptions become classified failures."""
        claim = self.active.claim
        request = (
            claim["request"] if self.warm_start is None else {**claim["request"], "warm_start": str(self.warm_start)}
        )
        try:
            return self.processor.run(
                input_dir=input_dir,
                output_dir=output_dir,
                request=request,
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

    def _report_failure(self, failure: ProcessorFailure, *, diagnostics: dict | None = None) -> None:
        if self.active.lost.is_set():
            return
        if self.active.cancel.is_set():
            failure = ProcessorFailure(
                FailureClass.WORKER_INTERRUPTED, "cancelled", "Cancelled on request.", failure.diagnostics
            )
        report = {
            "claim_id": self.active.claim_id,
            "failure_class": failure.failure_class,
            "code": _storable(failure.code),
            "message": _storable(failure.message),
            "diagnostics": diagnostics or _diagnostics_payload(failure.diagnostics),
        }
        self.active.finishing.set()
        try:
            outcome = self.client.fail(**report)
        except CoreError as refusal:
            if refusal.code in CLAIM_GONE_CODES:
                raise
            outcome = self._report_refused_failure(report, refusal)
        state = outcome.get("job_state")
        logger.info(
            "reported failure",
            extra={**self.log, "class": failure.failure_class, "job_state": state, **self.timings_ms},
        )
