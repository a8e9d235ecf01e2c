"""The executors: confinement, limits, wall clock, cancellation and whole-tree kills."""

import logging
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from quire_worker.contracts import ExecutorError, Limits
from quire_worker.sandbox import BwrapExecutor, LocalExecutor, sandbox_self_check
from quire_worker.sandbox.proc import processes_of_uid
from tests.waiting import wait_until
from tests.worker.conftest import WATCHED_UID

SYSTEM_PYTHON = "/usr/bin/python3"  # inside the sandbox's read-only /usr
GENEROUS_TEARDOWN_SECONDS = 10.0


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


@pytest.fixture
def run_in(work_dir: Path):
    """``run_in(executor, argv, **limits)``: run argv in the work directory, which alone is writable."""

    def run(executor, argv: list[str], *, cancel: threading.Event | None = None, env=None, **limits):
        return executor.run(
            argv,
            cwd=work_dir,
            writable=[work_dir],
            readable=[],
            env=env or {},
            limits=Limits(**{"wall_seconds": 20, **limits}),
            cancel=cancel or threading.Event(),
        )

    return run


def shell(script: str) -> list[str]:
    return ["sh", "-c", script]


def is_alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_this_host_can_run_the_sandbox():
    assert sandbox_self_check() is None


def test_the_sandbox_runs_commands_as_the_jobs_own_unprivileged_uid(run_in, watched_executor):
    run = run_in(watched_executor, shell("id -u; id -g; grep CapEff /proc/self/status"))

    assert run.stdout.decode().split() == [str(WATCHED_UID), str(WATCHED_UID), "CapEff:", "0000000000000000"]


def test_the_sandbox_sees_no_worker_files(run_in, tmp_path):
    (tmp_path / "secret.txt").write_text("worker secret")

    run = run_in(BwrapExecutor(), shell(f"cat {tmp_path / 'secret.txt'} /etc/passwd; ls /root /home"))

    assert run.returncode != 0
    assert b"worker secret" not in run.stdout
    assert b"root:x:0:0" not in run.stdout


def test_only_the_writable_directories_can_be_written(run_in, work_dir):
    run = run_in(BwrapExecutor(), shell("touch inside && touch /usr/outside; touch /outside; echo done"))

    assert (work_dir / "inside").exists()
    assert run.stderr.count(b"Read-only file system") + run.stderr.count(b"Permission denied") == 2


def test_the_environment_is_only_what_the_caller_gives(run_in, monkeypatch):
    monkeypatch.setenv("QUIRE_WORKER_TOKEN", "must-not-leak")

    run = run_in(BwrapExecutor(), ["env"], env={"GIVEN": "yes"})

    names = {line.split("=", 1)[0] for line in run.stdout.decode().splitlines()}
    assert names == {"GIVEN", "PATH", "PWD"}  # bwrap sets PWD for the working directory


def test_the_network_is_unreachable_from_the_sandbox(run_in, loopback_listener):
    connect = f"import socket; socket.create_connection(('127.0.0.1', {loopback_listener.port}), timeout=5)"

    run = run_in(BwrapExecutor(), [SYSTEM_PYTHON, "-c", connect])

    assert run.returncode != 0
    assert b"ConnectionRefusedError" in run.stderr
    assert not loopback_listener.was_contacted()


def test_the_local_executor_reaches_the_same_listener(run_in, loopback_listener):
    connect = f"import socket; socket.create_connection(('127.0.0.1', {loopback_listener.port}), timeout=5)"

    run = run_in(LocalExecutor(), [SYSTEM_PYTHON, "-c", connect])

    assert run.returncode == 0
    assert loopback_listener.was_contacted()


def test_tmp_is_private_and_bounded(run_in):
    run = run_in(BwrapExecutor(), shell("head -c 2000000 /dev/zero > /tmp/fill"), tmp_bytes=1024**2)

    assert b"No space left on device" in run.stderr


def test_the_wall_clock_kills_grandchildren_in_the_sandbox(run_in, watched_executor):
    started = time.monotonic()

    run = run_in(watched_executor, shell("sleep 300 & sh -c 'sleep 300 & wait' & wait"), wall_seconds=1)

    assert run.timed_out
    assert time.monotonic() - started < 1 + GENEROUS_TEARDOWN_SECONDS
    assert processes_of_uid(WATCHED_UID) == []


def test_the_wall_clock_kills_grandchildren_of_the_local_executor(run_in, work_dir):
    run = run_in(LocalExecutor(), shell("sh -c 'sleep 300 & echo $! > grandchild; wait' & wait"), wall_seconds=1)

    assert run.timed_out
    assert not is_alive(int((work_dir / "grandchild").read_text()))


def test_cancellation_stops_the_command_and_its_children(run_in, work_dir, watched_executor):
    cancel = threading.Event()
    outcome = {}

    def run_command():
        outcome["run"] = run_in(watched_executor, shell("touch started; sleep 300 & wait"), cancel=cancel)

    runner = threading.Thread(target=run_command)
    runner.start()
    wait_until(lambda: (work_dir / "started").exists())
    cancel.set()
    runner.join(timeout=GENEROUS_TEARDOWN_SECONDS)

    assert outcome["run"].cancelled
    assert processes_of_uid(WATCHED_UID) == []


def test_the_local_executor_stops_a_command_that_ignores_sigterm(run_in, work_dir):
    cancel = threading.Event()
    outcome = {}

    def run_command():
        script = "trap '' TERM; touch started; while :; do sleep 0.1; done"
        outcome["run"] = run_in(LocalExecutor(), shell(script), cancel=cancel)

    runner = threading.Thread(target=run_command)
    runner.start()
    wait_until(lambda: (work_dir / "started").exists())
    cancel.set()
    runner.join(timeout=GENEROUS_TEARDOWN_SECONDS)

    assert outcome["run"].cancelled
    assert outcome["run"].returncode == -9


def test_captured_output_keeps_head_and_tail_within_the_bound(run_in):
    script = "echo first-line; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo last-line"

    run = run_in(BwrapExecutor(), shell(script), log_bytes=4096)

    assert run.returncode == 0
    assert len(run.stdout) <= 4096
    assert run.stdout.startswith(b"first-line")
    assert run.stdout.rstrip().endswith(b"last-line")
    assert not run.output_limit_exceeded


def test_a_flood_of_output_stops_the_command(run_in):
    run = run_in(BwrapExecutor(), ["yes"], output_bytes=1024**2)

    assert run.output_limit_exceeded
    assert run.returncode != 0


def test_a_flood_of_files_stops_the_command(run_in):
    script = "i=0; while :; do i=$((i+1)); head -c 65536 /dev/zero > part$i; done"

    run = run_in(BwrapExecutor(), shell(script), output_bytes=4 * 1024**2)

    assert run.output_limit_exceeded


@pytest.mark.parametrize("executor_class", [BwrapExecutor, LocalExecutor])
def test_the_file_size_limit_stops_a_big_write(run_in, work_dir, executor_class):
    run = run_in(executor_class(), shell("head -c 2000000 /dev/zero > big"), file_size_bytes=1024**2)

    assert run.returncode != 0
    assert (work_dir / "big").stat().st_size == 1024**2


@pytest.mark.parametrize("executor_class", [BwrapExecutor, LocalExecutor])
def test_a_command_killed_by_a_signal_reports_the_signal_as_a_negative_status(run_in, executor_class):
    run = run_in(executor_class(), shell("kill -XCPU $$"))

    assert run.returncode == -signal.SIGXCPU


def test_a_command_exiting_with_a_plain_status_keeps_it_in_the_sandbox(run_in):
    run = run_in(BwrapExecutor(), shell("exit 3"))

    assert run.returncode == 3


def test_the_process_bound_counts_only_the_jobs_processes(run_in, watched_executor):
    script = "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 5 & done; wait"

    run = run_in(watched_executor, shell(script), max_processes=6, wall_seconds=2)

    assert b"fork" in run.stderr.lower()
    assert processes_of_uid(WATCHED_UID) == []


@pytest.mark.parametrize("executor_class", [BwrapExecutor, LocalExecutor])
def test_cpu_and_memory_limits_apply(run_in, executor_class):
    run = run_in(executor_class(), shell("ulimit -t; ulimit -v"), cpu_seconds=7, memory_bytes=512 * 1024**2)

    assert run.stdout.decode().split() == ["7", str(512 * 1024)]


def test_a_program_that_is_not_installed_is_an_executor_error(run_in):
    with pytest.raises(ExecutorError, match="not installed"):
        run_in(BwrapExecutor(), ["quire-no-such-program"])


def test_a_sandbox_that_cannot_be_set_up_is_an_executor_error(work_dir):
    with pytest.raises(ExecutorError, match="could not set up the sandbox"):
        BwrapExecutor().run(
            ["true"],
            cwd=work_dir,
            writable=[work_dir],
            readable=[work_dir / "missing"],
            env={},
            limits=Limits(),
            cancel=threading.Event(),
        )


def test_the_local_executor_warns_that_it_is_no_boundary(caplog):
    with caplog.at_level(logging.WARNING):
        LocalExecutor()

    assert "not a security boundary" in caplog.text


class LoopbackListener:
    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.setblocking(False)
        self.port = self.socket.getsockname()[1]

    def was_contacted(self) -> bool:
        try:
            connection, _ = self.socket.accept()
        except BlockingIOError:
            return False
        connection.close()
        return True


@pytest.fixture
def loopback_listener():
    listener = LoopbackListener()
    yield listener
    listener.socket.close()
