"""Running one claim: how its failures are classified, and where its files live."""

import logging
import stat
from pathlib import Path

import pytest

from quire_worker.contracts import ExecutorError, FailureClass, ProcessorFailure, ProcessorResult
from quire_worker.job_run import ActiveClaim, JobRun
from quire_worker.processors.echo import EchoProcessor
from quire_worker.testing import InMemoryCore, bundle_archive

MAIN = b"\\documentclass{article}"


class ScriptedProcessor(EchoProcessor):
    """Echo's identity, but its run does what the test says, seeing what a processor sees."""

    def __init__(self, act):
        self.act = act

    def run(self, *, input_dir: Path, output_dir: Path, **_) -> ProcessorResult:
        return self.act(input_dir, output_dir)


@pytest.fixture
def core() -> InMemoryCore:
    return InMemoryCore()


@pytest.fixture
def run_claim(core, tmp_path):
    """``run_claim(data, processor=...)``: acquire the claim for ``data`` and run it; return Core's reports."""

    def run(data: bytes, *, processor=None) -> list[tuple]:
        core.queue_claim(data)
        [claim] = core.acquire(session_id="session-1", offers={"test.echo/v1": 1}, wait_seconds=0)
        JobRun(
            client=core,
            active=ActiveClaim(claim=claim),
            processor=processor or EchoProcessor(),
            executor=None,
            work_root=tmp_path / "work",
        ).execute()
        return core.reports

    return run


def raising(exc: Exception):
    def act(input_dir, output_dir):
        raise exc

    return act


def test_a_good_bundle_is_delivered(run_claim):
    reports = run_claim(bundle_archive({"main.tex": MAIN}))

    assert reports == [("delivery", "claim-0001")]


def test_the_delivery_log_line_says_where_the_agents_time_went(run_claim, caplog):
    with caplog.at_level(logging.INFO, logger="quire_worker.job_run"):
        run_claim(bundle_archive({"main.tex": MAIN}))

    delivered = next(record for record in caplog.records if record.getMessage() == "delivered")
    steps = ("input_ms", "download_ms", "processor_ms", "upload_ms", "delivery_ms")
    timings = {step: getattr(delivered, step) for step in steps}
    assert all(isinstance(ms, float) and ms >= 0 for ms in timings.values()), timings
    assert timings["download_ms"] <= timings["input_ms"], "the download is part of the input step"


def test_a_reported_failure_says_how_long_its_steps_took_too(run_claim, caplog):
    with caplog.at_level(logging.INFO, logger="quire_worker.job_run"):
        run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(raising(KeyError("page"))))

    reported = next(record for record in caplog.records if record.getMessage() == "reported failure")
    assert isinstance(reported.input_ms, float) and isinstance(reported.processor_ms, float)


@pytest.mark.parametrize(
    "data",
    [
        bundle_archive({"main.tex": MAIN}, manifest=b"{not json"),
        bundle_archive({"main.tex": MAIN}, manifest=b"[]"),
        bundle_archive({"main.tex": MAIN}, manifest={"files": [{"path": "main.tex"}]}),
        bundle_archive({"a": b"x", "a/b": b"y"}),
    ],
    ids=["not-json", "not-an-object", "no-length-or-sha256", "file-directory-clash"],
)
def test_a_bad_bundle_is_reported_as_invalid_input_not_retried(run_claim, data):
    reports = run_claim(data)

    assert [(kind, failure_class) for kind, _, failure_class, _ in reports] == [("failure", "invalid_input")]


def test_a_processor_that_breaks_unexpectedly_is_a_contract_violation(run_claim):
    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(raising(KeyError("page"))))

    assert [report[2] for report in reports] == [FailureClass.INTERNAL_CONTRACT_VIOLATION]


def test_a_sandbox_that_cannot_start_is_transient(run_claim):
    processor = ScriptedProcessor(raising(ExecutorError("bubblewrap could not set up the sandbox")))

    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=processor)

    assert [report[2] for report in reports] == [FailureClass.TRANSIENT_INFRASTRUCTURE]


def test_the_claims_work_directory_is_private_to_the_agent(run_claim):
    seen = {}

    def look(input_dir, output_dir):
        seen["work"] = stat.S_IMODE(input_dir.parent.stat().st_mode)
        seen["parent"] = input_dir.parent.name
        raise RuntimeError("stop here")

    run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(look))

    assert seen == {"work": 0o700, "parent": "claim-0001"}


def test_the_claims_work_directory_is_removed_afterwards(run_claim, tmp_path):
    run_claim(bundle_archive({"main.tex": MAIN}))

    assert list((tmp_path / "work").iterdir()) == []


def _two_outputs(input_dir, output_dir):
    from quire_worker.contracts import OutputFile

    for name in ("document.pdf", "build.log"):
        (output_dir / name).write_bytes(name.encode())
    return ProcessorResult(
        outputs=(
            OutputFile("pdf", output_dir / "document.pdf", "application/pdf", "document.pdf"),
            OutputFile("log", output_dir / "build.log", "text/plain", "build.log"),
        )
    )


def test_every_output_is_uploaded_before_the_delivery(core, run_claim):
    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(_two_outputs))

    assert sorted((u["role"], u["data"]) for u in core.uploads) == [("log", b"build.log"), ("pdf", b"document.pdf")]
    assert reports == [("delivery", "claim-0001")]


def test_an_output_goes_up_on_the_claims_own_ticket_for_its_role(core, run_claim):
    run_claim(bundle_archive({"main.tex": MAIN}))

    [upload] = core.uploads
    assert upload["role"] == "echo"
    assert upload["ticket"]["url"] == "/transfers/claim-0001-echo", "no ticket request of its own"


def test_an_output_whose_role_has_no_ticket_with_the_claim_is_uploaded_without_one(core, run_claim):
    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(_two_outputs))

    assert {u["role"]: u["ticket"] for u in core.uploads} == {"pdf": None, "log": None}
    assert reports == [("delivery", "claim-0001")]


def test_a_refused_upload_means_no_delivery(core, run_claim):
    from quire_worker.testing import core_refuses

    core.fail_next("upload_output", core_refuses("output_rejected"))
    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(_two_outputs))

    assert len(core.uploads) == 1  # the other output went up side by side
    assert reports == []  # nothing delivered: the claim is given up and its lease will lapse


def test_a_refused_delivery_is_reported_as_a_failure_not_left_to_the_lease(core, run_claim):
    from quire_worker.testing import core_refuses

    core.fail_next("deliver", core_refuses("invalid_text"))
    reports = run_claim(bundle_archive({"main.tex": MAIN}))

    assert reports == [("failure", "claim-0001", FailureClass.INTERNAL_CONTRACT_VIOLATION, "delivery_refused")]


def test_a_refused_failure_report_is_sent_again_bare_keeping_its_class_and_code(core, run_claim):
    from quire_worker.testing import core_refuses

    core.fail_next("fail", core_refuses("invalid_text"))
    rejected = ProcessorFailure(FailureClass.PROCESSOR_REJECTED, "typst_error", "main.typ:1: panicked")
    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(raising(rejected)))

    assert reports == [("failure", "claim-0001", FailureClass.PROCESSOR_REJECTED, "typst_error")]


def test_a_failure_report_refused_twice_says_so_as_a_contract_violation(core, run_claim):
    from quire_worker.testing import core_refuses

    core.fail_next("fail", core_refuses("invalid_text"), core_refuses("invalid_text"))
    rejected = ProcessorFailure(FailureClass.PROCESSOR_REJECTED, "typst_error", "main.typ:1: panicked")
    reports = run_claim(bundle_archive({"main.tex": MAIN}), processor=ScriptedProcessor(raising(rejected)))

    assert reports == [("failure", "claim-0001", FailureClass.INTERNAL_CONTRACT_VIOLATION, "failure_refused")]


class RequestSeeingProcessor(EchoProcessor):
    """Echo's identity; keeps the request it was run with and the bytes of the warm start it names."""

    def __init__(self):
        self.request, self.warm_start = None, None

    def run(self, *, input_dir: Path, output_dir: Path, request: dict, **_) -> ProcessorResult:
        self.request = request
        if "warm_start" in request:
            self.warm_start = Path(request["warm_start"]).read_bytes()
        return ProcessorResult(outputs=())


def run_offering(core, tmp_path, warm_start: bytes, **declared) -> RequestSeeingProcessor:
    core.queue_claim(bundle_archive({"main.tex": MAIN}), warm_start=warm_start, **declared)
    [claim] = core.acquire(session_id="session-1", offers={"test.echo/v1": 1}, wait_seconds=0)
    processor = RequestSeeingProcessor()
    JobRun(
        client=core, active=ActiveClaim(claim=claim), processor=processor, executor=None, work_root=tmp_path
    ).execute()
    return processor


def test_a_claims_warm_start_reaches_the_processor_as_a_file_of_the_job(core, tmp_path):
    processor = run_offering(core, tmp_path, b"auxiliary files")

    assert processor.warm_start == b"auxiliary files"
    assert Path(processor.request["warm_start"]).parent.parent == tmp_path  # in the job's own directory


def test_a_warm_start_that_is_not_what_the_claim_declared_is_left_out_and_the_job_runs(core, tmp_path):
    processor = run_offering(core, tmp_path, b"tampered", warm_start_sha256="0" * 64)

    assert processor.request is not None and "warm_start" not in processor.request
    assert core.reports[-1][0] == "delivery"


def test_a_warm_start_core_refuses_is_left_out_and_the_job_runs(core, tmp_path):
    from quire_worker.client import CoreError

    core.fail_next("download_warm_start", CoreError(404, "warm_start_not_found", "This claim has no warm start."))
    processor = run_offering(core, tmp_path, b"auxiliary files")

    assert "warm_start" not in processor.request
    assert core.reports[-1][0] == "delivery"
