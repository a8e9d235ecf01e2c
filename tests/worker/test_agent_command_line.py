"""The agent's command line: the unsandboxed executor is opt-in and says what it is."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _agent(tmp_path, *args: str) -> subprocess.CompletedProcess:
    token = tmp_path / "token"
    token.write_text("unused")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "quire_worker",
            "--core-url",
            "http://127.0.0.1:9",
            "--token-file",
            str(token),
            "--operations",
            "latex.compile.pdf/v1",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_local_executor_is_refused_without_allow_unsandboxed(tmp_path):
    result = _agent(tmp_path, "--executor", "local")
    assert result.returncode != 0
    assert "not a security boundary" in result.stderr and "--allow-unsandboxed" in result.stderr


def test_sigusr1_writes_every_threads_stack_to_the_log(tmp_path):
    import signal
    import time

    token, log = tmp_path / "token", tmp_path / "agent.log"
    token.write_text("unused")
    with open(log, "wb") as output:
        agent = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "quire_worker",
                "--core-url",
                "http://127.0.0.1:9",
                "--token-file",
                str(token),
                "--test-operations",
                "--operations",
                "test.echo/v1",
                "--work-dir",
                str(tmp_path / "work"),
            ],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "retrying" not in log.read_text():  # up and trying to register with a Core that is not there
            assert agent.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        agent.send_signal(signal.SIGUSR1)
        # The dump is written frame by frame: wait for the agent's own frames, not just its first line,
        # or the kill below may cut it short.
        while "quire_worker/agent.py" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert agent.poll() is None  # the signal dumps stacks; it does not end the agent
    finally:
        agent.kill()
        agent.wait()
    dump = log.read_text()
    assert "Thread 0x" in dump and "quire_worker/agent.py" in dump


def test_agents_given_their_own_sandbox_uids_lease_disjoint_uids_at_the_same_time():
    """Two agent hosts on one kernel (the namespace cluster): with ranges of their own, their jobs never share
    a uid, so one agent's eviction of a uid's leftovers cannot kill the other's job."""
    from quire_worker.main import executor_for
    from quire_worker.sandbox.uids import DEFAULT_SANDBOX_UIDS

    # Not the namespace cluster's own ranges (scripts/cluster/topology.py): a lease evicts its uid's processes,
    # and bench-cluster's smoke may be running its agents' jobs meanwhile.
    first = executor_for("bwrap", allow_unsandboxed=False, uids_start=DEFAULT_SANDBOX_UIDS.start + 300_000)
    second = executor_for("bwrap", allow_unsandboxed=False, uids_start=DEFAULT_SANDBOX_UIDS.start + 304_096)

    with first.uid_pool.lease() as one, second.uid_pool.lease() as other:
        assert one == DEFAULT_SANDBOX_UIDS.start + 300_000
        assert other == DEFAULT_SANDBOX_UIDS.start + 304_096
