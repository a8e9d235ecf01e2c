"""Command line of the worker agent: ``python -m quire_worker`` or ``manage.py processing_worker``."""

import argparse
import faulthandler
import logging
import os
import signal
import socket
import sys
import tempfile
from pathlib import Path

from quire_wire.log_lines import StructuredFormatter
from quire_worker.agent import AgentSettings, WorkerAgent
from quire_worker.client import HttpCoreClient
from quire_worker.discovery import processors_available
from quire_worker.sandbox.uids import DEFAULT_SANDBOX_UIDS


def parser(prog: str = "python -m quire_worker") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Run a Quire worker agent.")
    p.add_argument("--core-url", required=True, help="Core's base URL, e.g. http://127.0.0.1:8000")
    p.add_argument("--token-file", required=True, help="File holding this worker identity's token.")
    p.add_argument("--ca-file", help="PEM file of the CA that signed Core's certificate (https:// URLs).")
    p.add_argument("--instance", default=f"{socket.gethostname()}-{os.getpid()}")
    p.add_argument("--executor", choices=["bwrap", "local"], default="bwrap")
    p.add_argument("--allow-unsandboxed", action="store_true", help="Permit --executor local (trusted code only).")
    p.add_argument(
        "--sandbox-uids",
        type=int,
        default=DEFAULT_SANDBOX_UIDS.start,
        help="First of the 1024 uids this host's sandboxes run as; hosts sharing one kernel (containers, network "
        "namespaces) each need a range of their own, as a uid is reserved per network namespace.",
    )
    p.add_argument("--slots", type=int, default=1, help="Concurrent jobs per processor.")
    p.add_argument("--operations", help="Comma-separated operations to serve (default: all available).")
    p.add_argument("--test-operations", action="store_true", help="Also serve test.echo/v1.")
    p.add_argument("--max-jobs", type=int, help="Exit after starting this many jobs (tests).")
    p.add_argument("--work-dir", help="Where jobs unpack their input (default: a temporary directory).")
    p.add_argument("--acquire-wait", type=float, default=20.0, help="Long-poll seconds per acquire.")
    return p


def executor_for(name: str, *, allow_unsandboxed: bool, uids_start: int = DEFAULT_SANDBOX_UIDS.start):
    from quire_worker import sandbox

    if name == "local":
        if not allow_unsandboxed:
            raise SystemExit("The local executor is not a security boundary; pass --allow-unsandboxed to use it.")
        logging.getLogger(__name__).warning("using the local executor: NOT a security boundary (trusted code only)")
        return sandbox.LocalExecutor()
    problem = sandbox.sandbox_self_check()
    if problem:
        raise SystemExit(f"bubblewrap cannot sandbox jobs on this host: {problem}")
    return sandbox.BwrapExecutor(uids=range(uids_start, uids_start + len(DEFAULT_SANDBOX_UIDS)))


def run(argv: list[str] | None = None, *, prog: str = "python -m quire_worker") -> int:
    args = parser(prog).parse_args(argv)
    handler = logging.StreamHandler()
    handler.setFormatter(StructuredFormatter())  # the same key=value lines as Core's, with correlation fields
    logging.basicConfig(level=os.environ.get("QUIRE_LOG_LEVEL", "INFO"), handlers=[handler])
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1 <pid>`: every thread's stack on stderr
    wanted = set(args.operations.split(",")) if args.operations else None
    processors = processors_available(wanted=wanted, test_operations=args.test_operations)
    if not processors:
        raise SystemExit("No processor can run on this host; nothing to serve.")
    needs_sandbox = any(getattr(p, "needs_sandbox", True) for p in processors)
    executor = (
        executor_for(args.executor, allow_unsandboxed=args.allow_unsandboxed, uids_start=args.sandbox_uids)
        if needs_sandbox
        else None
    )
    token = Path(args.token_file).read_text().strip()
    work_root = Path(args.work_dir or tempfile.mkdtemp(prefix="quire-worker-"))
    work_root.mkdir(parents=True, exist_ok=True)
    agent = WorkerAgent(
        client=HttpCoreClient(args.core_url, token, ca_file=args.ca_file),
        processors=processors,
        executor=executor,
        settings=AgentSettings(
            instance=args.instance,
            work_root=work_root,
            slots=args.slots,
            max_jobs=args.max_jobs,
            acquire_wait_seconds=args.acquire_wait,
        ),
    )
    agent.install_signal_handlers()
    return agent.run()


if __name__ == "__main__":
    sys.exit(run())
