"""`make run`'s processes: one that dies is started again after a growing pause; the web server is not."""

import sys
import time
from pathlib import Path

from scripts.supervision import Supervised, stop_together

ROOT = Path(__file__).resolve().parents[2]
DIES = [sys.executable, "-c", "import sys; sys.exit(3)"]
SLEEPS = [sys.executable, "-c", "import time; time.sleep(60)"]


def watched_for(child: Supervised, seconds: float) -> list[str]:
    messages, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        if message := child.check():
            messages.append(message)
        time.sleep(0.02)
    return messages


def test_a_process_that_dies_is_started_again_after_pauses_that_double(capsys):
    child = Supervised("relay", DIES, restart=True, cwd=ROOT, first=0.2)
    child.start()

    # Dies at once each time: pauses of 0.2, 0.4 and 0.8 s. Watched until the third restart (a loaded machine
    # starts an interpreter slowly), then stopped before a fourth.
    deadline = time.monotonic() + 30
    while child.restarts < 3 and time.monotonic() < deadline:
        child.check()
        time.sleep(0.02)

    child.stop()
    assert child.restarts == 3
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("relay exited with 3")]
    assert lines[:3] == [
        "relay exited with 3; starting it again in 0.2 s.",
        "relay exited with 3; starting it again in 0.4 s.",
        "relay exited with 3; starting it again in 0.8 s.",
    ]


def test_a_required_process_that_dies_is_reported_and_not_started_again():
    child = Supervised("web", DIES, restart=False, cwd=ROOT)
    child.start()

    messages = watched_for(child, 0.5)

    assert messages and set(messages) == {"web exited with 3."}
    assert child.restarts == 0


def test_stopping_ends_a_running_process():
    child = Supervised("worker", SLEEPS, restart=True, cwd=ROOT)
    child.start()

    child.stop(timeout=5)

    assert child.process.returncode is not None


# Drains on the first SIGTERM (as the worker agent does while a build runs) and exits on the second.
DRAINS = [
    sys.executable,
    "-c",
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, lambda *_: signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)))\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)",
]


def test_stopping_together_ends_all_and_gives_a_draining_process_its_second_signal_before_sigkill(tmp_path):
    import subprocess

    sleeper = Supervised("relay", SLEEPS, restart=True, cwd=ROOT)
    agent = Supervised("worker", DRAINS, restart=True, cwd=ROOT)
    sleeper.start()
    agent.process = subprocess.Popen(DRAINS, cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE)
    assert agent.process.stdout.readline() == b"ready\n"  # its handler is in place

    stop_together([sleeper, agent], seconds=20, second_signal_before=15)

    assert sleeper.process.returncode == -15
    assert agent.process.returncode == 0, "the second SIGTERM ended it, not SIGKILL"
