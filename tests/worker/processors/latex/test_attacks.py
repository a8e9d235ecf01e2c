"""Hostile documents: they can neither read the worker, nor run commands, nor outlast their limits."""

import logging
import threading
import time
from pathlib import Path

import pytest

from quire_worker.contracts import FailureClass, Limits, ProcessorFailure
from quire_worker.sandbox import LocalExecutor
from quire_worker.sandbox.proc import processes_of_uid
from tests.waiting import wait_until
from tests.worker.bundles import article, pdf_text
from tests.worker.conftest import WATCHED_UID

PASSWD_LINE = "root:x:0:0"
ENDLESS_LOOP = article(r"\loop\iftrue\repeat")
GENEROUS_TEARDOWN_SECONDS = 10.0


def everything_the_build_shows(build, **kwargs) -> str:
    """The PDF's text and bytes and the log when the build succeeds; the failure and its log otherwise."""
    try:
        result = build(**kwargs)
    except ProcessorFailure as failure:
        return f"{failure.message}\n{failure.diagnostics.log}\n{failure.diagnostics.entries}"
    paths = {output.role: output.path for output in result.outputs}
    pdf, log = paths["pdf"], paths["log"]
    return f"{pdf_text(pdf)}\n{pdf.read_bytes().decode('latin-1')}\n{log.read_text()}"


def failure_of(build, **kwargs) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as caught:
        build(**kwargs)
    return caught.value


def processes_working_in(directory: Path) -> list[int]:
    """Processes whose working directory is in ``directory`` (even after it was deleted)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").readlink().is_relative_to(directory):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_input_of_an_absolute_path_reveals_nothing(bundle, build):
    assert PASSWD_LINE in Path("/etc/passwd").read_text()
    bundle({"main.tex": article(r"\input{/etc/passwd}")})

    shown = everything_the_build_shows(build)

    assert PASSWD_LINE not in shown
    assert "refused reading from /etc/passwd (openin_any = p)" in shown


def test_openin_of_an_absolute_path_reads_nothing(bundle, build):
    assert PASSWD_LINE in Path("/etc/passwd").read_text()
    body = r"""\newread\secret
\immediate\openin\secret=/etc/passwd
\ifeof\secret Nothing to read.\else\read\secret to\firstline Read: \firstline\fi"""
    bundle({"main.tex": article(body)})

    shown = everything_the_build_shows(build)

    assert PASSWD_LINE not in shown
    assert "Nothing to read." in shown


def test_shell_escape_does_not_run(bundle, build):
    body = r"""\immediate\write18{echo > shellran.tex}
\IfFileExists{shellran.tex}{The shell ran.}{The shell stayed off.}"""
    bundle({"main.tex": article(body)})

    shown = everything_the_build_shows(build)

    assert "The shell stayed off." in shown
    assert "runsystem(echo > shellran.tex)...disabled" in shown


def test_shell_escape_to_the_worker_tmp_does_not_run(bundle, build, tmp_path):
    marker = Path("/tmp") / f"pwned-{tmp_path.name}"
    bundle({"main.tex": article(f"\\immediate\\write18{{touch {marker}}}Text.")})

    shown = everything_the_build_shows(build)

    assert not marker.exists()
    assert f"runsystem(touch {marker})...disabled" in shown


@pytest.mark.parametrize("target", ["../escape.txt", "/tmp/quire-escape.txt"])
def test_openout_outside_the_project_fails(bundle, build, target):
    bundle({"main.tex": article(f"\\immediate\\openout5={target}\n\\immediate\\write5{{out}}Text.")})

    failure = failure_of(build)

    assert failure.failure_class == FailureClass.PROCESSOR_REJECTED
    assert f"I can't write on file `{target}'" in failure.message
    assert any(f"refused writing to {target}" in entry.message for entry in failure.diagnostics.entries)


def test_an_endless_loop_ends_as_resource_limit_within_the_wall_limit(bundle, build, watched_executor, caplog):
    bundle({"main.tex": ENDLESS_LOOP})
    limits = Limits(wall_seconds=3)

    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        failure = failure_of(build, limits=limits, executor=watched_executor)

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "wall_time_limit")
    assert time.monotonic() - started < limits.wall_seconds + GENEROUS_TEARDOWN_SECONDS
    assert processes_of_uid(WATCHED_UID) == []
    assert "leftover sandbox processes" not in caplog.text  # the group kill did it, not the backstop


def test_an_endless_loop_under_the_local_executor_leaves_no_engine_running(bundle, build, job_dir):
    bundle({"main.tex": ENDLESS_LOOP})

    failure = failure_of(build, limits=Limits(wall_seconds=3), executor=LocalExecutor())

    assert failure.code == "wall_time_limit"
    assert processes_working_in(job_dir) == []


def test_a_cpu_bound_loop_ends_as_resource_limit(bundle, build):
    bundle({"main.tex": ENDLESS_LOOP})

    failure = failure_of(build, limits=Limits(wall_seconds=30, cpu_seconds=1))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "cpu_time_limit")


def test_writing_one_file_until_the_size_limit_ends_as_resource_limit(bundle, build):
    body = r"""\newwrite\big
\immediate\openout\big=big.txt
\loop\immediate\write\big{A line that repeats until the file is too large.}\iftrue\repeat"""
    bundle({"main.tex": article(body)})

    failure = failure_of(build, limits=Limits(wall_seconds=30, file_size_bytes=2 * 1024**2))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "file_size_limit")


def test_writing_file_after_file_until_the_output_limit_ends_as_resource_limit(bundle, build):
    body = r"""\newcount\part \newwrite\piece
\loop\advance\part by 1
\immediate\openout\piece=piece\the\part.txt \immediate\write\piece{A piece.}\immediate\closeout\piece
\iftrue\repeat"""
    bundle({"main.tex": article(body)})

    failure = failure_of(build, limits=Limits(wall_seconds=30, output_bytes=4 * 1024**2))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "output_size_limit")


def test_cancelling_a_running_build_stops_tex_and_leaves_no_process(bundle, build, job_dir, watched_executor):
    bundle({"main.tex": ENDLESS_LOOP})
    cancel = threading.Event()
    outcome = {}

    def run_build():
        try:
            build(limits=Limits(wall_seconds=120), executor=watched_executor, cancel=cancel)
        except ProcessorFailure as failure:
            outcome["failure"] = failure
        outcome["ended_at"] = time.monotonic()

    builder = threading.Thread(target=run_build)
    builder.start()
    wait_until(lambda: any(job_dir.glob("work-*/src/main.log")))  # the engine has started
    cancelled_at = time.monotonic()
    cancel.set()
    builder.join(timeout=30)

    assert outcome["failure"].failure_class == FailureClass.WORKER_INTERRUPTED
    assert outcome["ended_at"] - cancelled_at < GENEROUS_TEARDOWN_SECONDS
    assert processes_of_uid(WATCHED_UID) == []


def test_an_engine_out_of_address_space_ends_as_resource_limit(bundle, build):
    bundle({"main.tex": article("Text.", preamble="\\usepackage{fontspec}\n")}, compiler="xelatex")

    failure = failure_of(build, limits=Limits(wall_seconds=30, memory_bytes=256 * 1024**2))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "memory_limit")


def test_exhausting_texs_own_memory_ends_as_resource_limit(bundle, build):
    bundle({"main.tex": article(r"\def\grow{x\grow}\grow")})

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "memory_limit")
