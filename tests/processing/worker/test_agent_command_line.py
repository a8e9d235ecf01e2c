"""The agent's command line: the unsandboxed executor is opt-in and says what it is."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _agent(tmp_path, *args: str) -> subprocess.CompletedProcess:
    token = tmp_path / "token"
    token.write_text("unused")
    return subprocess.run(
        [sys.executable, "-m", "processing.worker", "--core-url", "http://127.0.0.1:9", "--token-file", str(token),
         "--operations", "latex.compile.pdf/v1", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_local_executor_is_refused_without_allow_unsandboxed(tmp_path):
    result = _agent(tmp_path, "--executor", "local")
    assert result.returncode != 0
    assert "not a security boundary" in result.stderr and "--allow-unsandboxed" in result.stderr
