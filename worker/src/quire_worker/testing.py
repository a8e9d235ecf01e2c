"""An in-memory twin of Core's side of the worker protocol, to drive the agent without a server.

It ships with the agent (as procrastinate ships its ``testing`` connector), so tests outside this
repository can run ``WorkerAgent`` against it too.

It implements ``CoreClient``: claims handed to it are given out by ``acquire``, inputs are
served by ticket, and every report (failure, delivery, release, upload) is recorded in order.
A test scripts refusals and outages by queueing the exceptions a call raises before it answers,
and requests a claim's cancellation as a user would: the cancellation long-poll answers at once,
and claim heartbeats report it.
"""

import hashlib
import io
import json
import tarfile
import threading
import time
from collections import defaultdict, deque

from quire_wire import PROJECT_BUNDLE_SCHEMA
from quire_worker.client import CoreError, CoreUnavailable

ECHO_OPERATION = "test.echo/v1"


def session_gone() -> CoreError:
    return CoreError(409, "session_gone", "The session expired.")


def core_refuses(code: str = "validation_error") -> CoreError:
    return CoreError(422, code, "Refused.")


def core_unreachable() -> CoreUnavailable:
    return CoreUnavailable("POST sessions: connection refused")


class InMemoryCore:
    def __init__(self):
        self._lock = threading.Lock()
        self._claims: deque[dict] = deque()
        self._inputs: dict[str, bytes] = {}
        self.warm_starts: dict[str, bytes] = {}  # a claim's warm start, by claim id
        self._scripted: dict[str, deque[Exception | None]] = defaultdict(deque)
        self.sessions: list[str] = []
        self.reports: list[tuple] = []
        self.uploads: list[dict] = []
        self.acquired_sizes: list[int] = []  # how many claims each acquire handed out
        self.delivery_handouts: list[int] = []  # how many claims each delivery handed out
        self.outstanding = self.most_outstanding = 0  # claims handed out and not yet reported on
        self.reported = threading.Condition(self._lock)
        self.claim_queued = threading.Condition(self._lock)
        self.cancellation_changed = threading.Condition(self._lock)
        self.cancelled: set[str] = set()  # claims whose cancellation was requested
        self.heartbeat_seconds = 0.5  # as told to the agent when it registers
        self.claim_heartbeats: list[str] = []  # the claim of each claim heartbeat, in order
        self.cancellation_polls: list[list[str]] = []  # the claims each cancellation long-poll said it knew of
        # Called as ``acquire`` (``deliver``) is about to answer, to make something happen while it waited.
        self.while_acquiring = lambda: None
        self.while_delivering = lambda: None

    # --- arranging -------------------------------------------------------------------------------
    def queue_claim(
        self,
        data: bytes,
        *,
        schema: str = PROJECT_BUNDLE_SCHEMA,
        operation: str = ECHO_OPERATION,
        warm_start: bytes | None = None,
        warm_start_sha256: str | None = None,
    ) -> str:
        """Make ``data`` the input of a claim the next ``acquire`` hands out; return its claim id. ``warm_start``:
        the claim offers these bytes as its warm start (declared with ``warm_start_sha256``, by default theirs)."""
        with self._lock:
            number = len(self._inputs) + 1
            claim_id = f"claim-{number:04d}"
            self._inputs[f"/transfers/{claim_id}"] = data
            claim = _claim(claim_id, number, data, schema=schema, operation=operation)
            if warm_start is not None:
                self.warm_starts[claim_id] = warm_start
                sha256 = warm_start_sha256 or hashlib.sha256(warm_start).hexdigest()
                claim["warm_start"] = {"sha256": sha256, "size": len(warm_start)}
            self._claims.append(claim)
            self.claim_queued.notify_all()
        return claim_id

    def request_cancellation(self, claim_id: str) -> None:
        """As a user's cancel of the claim's running job does: wake the cancellation long-poll."""
        with self._lock:
            self.cancelled.add(claim_id)
            self.cancellation_changed.notify_all()

    def fail_next(self, call: str, *errors: Exception | None) -> None:
        """The next ``len(errors)`` calls of ``call`` raise these, in order; ``None`` answers normally."""
        with self._lock:
            self._scripted[call].extend(errors)

    def wait_for_reports(self, count: int, timeout: float = 30.0) -> list[tuple]:
        with self.reported:
            assert self.reported.wait_for(lambda: len(self.reports) >= count, timeout), self.reports
            return list(self.reports)

    # --- the protocol ----------------------------------------------------------------------------
    def register(self, *, instance: str, processors: list[dict]) -> dict:
        with self._lock:
            self._raise_scripted("register")
            self.sessions.append(f"session-{len(self.sessions) + 1}")
            return {"session_id": self.sessions[-1], "state": "active", "heartbeat_seconds": self.heartbeat_seconds}

    def session_heartbeat(self, *, session_id: str, health: dict[str, bool]) -> dict:
        return {"session_id": session_id, "state": "active"}

    def drain(self, *, session_id: str) -> dict:
        return {"session_id": session_id, "state": "draining"}

    def acquire(
        self, *, session_id: str, offers: dict[str, int], wait_seconds: float, max_claims: int = 1
    ) -> list[dict]:
        """Queued claims of offered operations, oldest first, within the offer and ``max_claims``; as Core
        does, wait up to ``wait_seconds`` for the first."""
        deadline = time.monotonic() + wait_seconds
        with self._lock:
            self._raise_scripted("acquire")
            while self._first_offered(offers) is None and (remaining := deadline - time.monotonic()) > 0:
                self.claim_queued.wait(remaining)
            taken = self._take(offers, max_claims)
        self.acquired_sizes.append(len(taken))
        self.while_acquiring()
        return taken

    def _take(self, offers: dict[str, int], count: int) -> list[dict]:
        taken, left = [], dict(offers)
        while len(taken) < count and (claim := self._first_offered(left)) is not None:
            self._claims.remove(claim)
            left[claim["operation"]] -= 1
            taken.append(claim)
        self.outstanding += len(taken)
        self.most_outstanding = max(self.most_outstanding, self.outstanding)
        return taken

    def _first_offered(self, offers: dict[str, int]) -> dict | None:
        return next((claim for claim in self._claims if offers.get(claim["operation"], 0) > 0), None)

    def claim_heartbeat(self, *, claim_id: str, phase: str) -> dict:
        with self._lock:
            self._raise_scripted("claim_heartbeat")
            self.claim_heartbeats.append(claim_id)
            return {"lease_expires_at": "2030-01-01T00:00:00Z", "cancellation_requested": claim_id in self.cancelled}

    def cancellations(self, *, session_id: str, known_claim_ids: list[str], wait_seconds: float) -> list[str]:
        """As Core does: the requested claims once one is not in ``known_claim_ids``, or after ``wait_seconds``.
        (Every requested claim counts as the session's here: the twin has one agent.)"""
        deadline = time.monotonic() + wait_seconds
        with self._lock:
            self._raise_scripted("cancellations")
            self.cancellation_polls.append(list(known_claim_ids))
            while not self.cancelled - set(known_claim_ids) and (remaining := deadline - time.monotonic()) > 0:
                self.cancellation_changed.wait(remaining)
            return sorted(self.cancelled)

    def download_input(self, *, ticket: dict) -> bytes:
        with self._lock:
            self._raise_scripted("download_input")
            return self._inputs[ticket["url"]]

    def download_warm_start(self, *, claim_id: str) -> bytes:
        with self._lock:
            self._raise_scripted("download_warm_start")
            return self.warm_starts[claim_id]

    def upload_output(
        self, *, claim_id: str, role: str, media_type: str, filename: str, data: bytes, ticket: dict | None = None
    ) -> dict:
        with self._lock:
            self._raise_scripted("upload_output")
            self.uploads.append(
                {"claim_id": claim_id, "role": role, "filename": filename, "data": data, "ticket": ticket}
            )
            return {"role": role}

    def fail(self, *, claim_id: str, failure_class: str, code: str, message: str, diagnostics: dict) -> dict:
        with self._lock:
            self._raise_scripted("fail")
        return self._report(("failure", claim_id, failure_class, code))

    def release(self, *, claim_id: str) -> dict:
        with self._lock:
            self._raise_scripted("release")
        return self._report(("release", claim_id))

    def deliver(self, *, claim_id: str, diagnostics: dict, offers: dict[str, int] | None = None) -> dict:
        """As Core does: the delivery frees its claim's slot, then claims for ``offers`` come with the answer."""
        with self._lock:
            self._raise_scripted("deliver")
        answer = self._report(("delivery", claim_id))
        with self._lock:
            successors = self._take(offers or {}, sum((offers or {}).values()))
        self.delivery_handouts.append(len(successors))
        self.while_delivering()
        return {**answer, "claims": successors}

    def _report(self, report: tuple) -> dict:
        with self.reported:
            self.reports.append(report)
            if report[0] in ("failure", "release", "delivery"):
                self.outstanding -= 1
            self.reported.notify_all()
        return {"job_id": f"job-{report[1]}", "job_state": "queued"}

    def _raise_scripted(self, call: str) -> None:
        error = self._scripted[call].popleft() if self._scripted[call] else None
        if error is not None:
            raise error


def _claim(claim_id: str, number: int, data: bytes, *, schema: str, operation: str) -> dict:
    sha256 = hashlib.sha256(data).hexdigest()
    return {
        "job_id": f"job-{number:04d}",
        "attempt": 1,
        "claim_id": claim_id,
        "operation": operation,
        "processor_contract": "quire-echo/1",
        "lease_expires_at": "2030-01-01T00:00:00Z",
        "limits": {"wall_seconds": 30, "artifact_bytes": 1024**2, "diagnostic_bytes": 4096, "lease_seconds": 30},
        "request": {
            "operation": operation,
            "input_schema": schema,
            "options": {},
            "input_profile": "",
            "filename": "",
            "attempt": 1,
        },
        "input": {
            "sha256": sha256,
            "size": len(data),
            "schema": schema,
            "download": {
                "ticket_id": claim_id,
                "url": f"/transfers/{claim_id}",
                "secret": "s",
                "expires_at": "2030-01-01T00:00:00Z",
                "max_bytes": len(data),
            },
        },
        "uploads": {
            "echo": {
                "ticket_id": f"{claim_id}-echo",
                "url": f"/transfers/{claim_id}-echo",
                "secret": "s",
                "expires_at": "2030-01-01T00:00:00Z",
                "max_bytes": 1024**2,
            }
        },
    }


def bundle_archive(files: dict[str, bytes], *, manifest: bytes | dict | None = None) -> bytes:
    """A ``project-bundle/v1`` tar of ``files`` (paths under ``files/``) with a matching manifest,
    or with ``manifest`` (an object, or raw bytes) in its place."""
    if manifest is None:
        manifest = {
            "schema": PROJECT_BUNDLE_SCHEMA,
            "files": [manifest_record(path, data) for path, data in files.items()],
        }
    members = {"manifest.json": manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()}
    members.update({f"files/{path}": data for path, data in files.items()})
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w") as archive:
        for name, data in members.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return stream.getvalue()


def manifest_record(path: str, data: bytes) -> dict:
    return {"path": path, "kind": "asset", "length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
