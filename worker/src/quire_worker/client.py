"""The agent's side of the worker protocol: a small client with intent-named methods.

Every mutating call carries a ``request_id`` made once per logical call and
reused on every retry, so a retry after a lost response gets Core's stored
answer. Connection failures and 5xx are retried with backoff until the retry
deadline (urllib3's ``Retry``), which lets an agent ride out a Core or database
restart.
"""

import hashlib
import json
import logging
import ssl
import time
import uuid
from typing import Protocol
from urllib.parse import quote, urlsplit

from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

import quire_wire

logger = logging.getLogger(__name__)

# Idle connections kept beyond this many are closed: a burst of parallel calls leaves no crowd of sockets behind.
KEEP_IDLE_CONNECTIONS = 16


class CoreError(Exception):
    """Core answered with a 4xx: the request was understood and refused."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class CoreUnavailable(Exception):
    """Core could not be reached (or kept failing) until the retry deadline."""


class CoreClient(Protocol):
    def register(self, *, instance: str, processors: list[dict]) -> dict: ...
    def session_heartbeat(self, *, session_id: str, health: dict[str, bool]) -> dict: ...
    def drain(self, *, session_id: str) -> dict: ...
    def acquire(
        self, *, session_id: str, offers: dict[str, int], wait_seconds: float, max_claims: int = 1
    ) -> list[dict]: ...
    def claim_heartbeat(self, *, claim_id: str, phase: str) -> dict: ...
    def cancellations(self, *, session_id: str, known_claim_ids: list[str], wait_seconds: float) -> list[str]: ...
    def download_input(self, *, ticket: dict) -> bytes: ...
    def download_warm_start(self, *, claim_id: str) -> bytes: ...
    def upload_output(
        self, *, claim_id: str, role: str, media_type: str, filename: str, data: bytes, ticket: dict | None = None
    ) -> dict: ...
    def fail(self, *, claim_id: str, failure_class: str, code: str, message: str, diagnostics: dict) -> dict: ...
    def release(self, *, claim_id: str) -> dict: ...
    def deliver(self, *, claim_id: str, diagnostics: dict, offers: dict[str, int] | None = None) -> dict: ...


class RetryUntilDeadline(Retry):
    """urllib3's ``Retry`` bounded by a time rather than a count: connection errors and 5xx of every method (a
    mutating call is made safe to repeat by its ``request_id``), the first again at once, then after a backoff
    doubling up to 5 s, until the next attempt would start after ``deadline`` (``time.monotonic()``). A
    certificate the expected CA did not sign is raised at once: no retry can help."""

    def __init__(self, *, deadline: float, **options):
        defaults = {
            "total": None,
            "allowed_methods": None,
            "status_forcelist": range(500, 600),
            "backoff_factor": 0.1,
            "backoff_max": 5.0,
            "backoff_jitter": 0.1,
            "redirect": False,
            "raise_on_status": False,
            "respect_retry_after_header": False,  # a 429's Retry-After is not an invitation to retry a 4xx
        }
        super().__init__(**{**defaults, **options})
        self.deadline = deadline

    def new(self, **options) -> "RetryUntilDeadline":
        return super().new(deadline=self.deadline, **options)

    def is_exhausted(self) -> bool:
        return time.monotonic() + self.get_backoff_time() > self.deadline

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        reason = error.args[0] if error is not None and error.args else None
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise reason
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        status = response.status if response is not None else 0
        logger.warning("core call failed; retrying", extra={"path": url, "status": status, "error": str(error)})
        return retry


class HttpCoreClient:
    PREFIX = quire_wire.PROTOCOL_PREFIX

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        retry_deadline: float = 600.0,
        ca_file: str | None = None,
    ):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"Core's URL is http:// or https://, not {base_url!r}")
        host = parts.hostname or "127.0.0.1"
        # Keep-alive connections between calls, shared by every thread: each job runs on a thread of its own,
        # and a connection per thread cost a TCP connection (accept, setup, teardown on both sides) per job.
        # Not blocking: a call beyond the kept connections opens one more, closed when it is given back.
        pool = {"maxsize": KEEP_IDLE_CONNECTIONS, "block": False}
        if parts.scheme == "https":
            # The certificate is verified, against ca_file when given (a deployment's own CA) or the system's
            # trusted ones; the token never travels to a host that could not prove it is Core.
            tls = ssl.create_default_context(cafile=ca_file)
            self._pool = HTTPSConnectionPool(host, parts.port or 443, ssl_context=tls, **pool)
        else:
            self._pool = HTTPConnectionPool(host, parts.port or 80, **pool)
        self._token = token
        self._timeout = timeout
        self._retry_deadline = retry_deadline

    def _call(self, method: str, path: str, *, body: bytes | None = None, headers=None, timeout=None):
        """Send with retries on connection errors, 5xx and in-progress duplicates; raise CoreError on 4xx."""
        retry = RetryUntilDeadline(deadline=time.monotonic() + self._retry_deadline)
        headers = {"Authorization": f"Bearer {self._token}", **(headers or {})}
        while True:
            try:
                response = self._pool.urlopen(
                    method,
                    path,
                    body=body,
                    headers=headers,
                    retries=retry,
                    redirect=False,
                    timeout=timeout or self._timeout,
                )
            except MaxRetryError as exc:
                raise CoreUnavailable(f"{method} {path}: {exc.reason}") from exc
            if response.status < 400:
                return response.data
            if response.status >= 500:  # still, at the deadline
                raise CoreUnavailable(f"{method} {path}: {response.status}")
            error = _error_of(response.status, response.data)
            if error.code != "request_in_progress":
                raise error
            # Core is still answering the same request_id: ask again, on the same deadline and backoff.
            try:
                retry = retry.increment(method, path, response=response)
            except MaxRetryError as exc:
                raise CoreUnavailable(f"{method} {path}: {error}") from exc
            retry.sleep()

    def _post(self, path: str, payload: dict, *, timeout: float | None = None) -> dict:
        body = json.dumps({**payload, "request_id": uuid.uuid4().hex}).encode()
        data = self._call(
            "POST",
            f"{self.PREFIX}/{path}",
            body=body,
            headers={"Content-Type": "application/json"},
            timeout=timeout,
        )
        return json.loads(data)

    def register(self, *, instance: str, processors: list[dict]) -> dict:
        payload = {"instance": instance, "protocol_version": quire_wire.PROTOCOL_VERSION, "processors": processors}
        return self._post("sessions", payload)

    def session_heartbeat(self, *, session_id: str, health: dict[str, bool]) -> dict:
        return self._post(f"sessions/{session_id}/heartbeat", {"health": health})

    def drain(self, *, session_id: str) -> dict:
        return self._post(f"sessions/{session_id}/drain", {})

    def acquire(
        self, *, session_id: str, offers: dict[str, int], wait_seconds: float, max_claims: int = 1
    ) -> list[dict]:
        payload = {
            "offers": [{"operation": op, "permits": n} for op, n in offers.items()],
            "wait_seconds": wait_seconds,
            "max_claims": max_claims,
        }
        return self._post(f"sessions/{session_id}/acquire", payload, timeout=wait_seconds + self._timeout)["claims"]

    def claim_heartbeat(self, *, claim_id: str, phase: str) -> dict:
        return self._post(f"claims/{claim_id}/heartbeat", {"phase": phase})

    def cancellations(self, *, session_id: str, known_claim_ids: list[str], wait_seconds: float) -> list[str]:
        """The session's claims whose cancellation was requested, once one beyond ``known_claim_ids`` is or after
        ``wait_seconds``. It changes nothing, so it carries no ``request_id``: a retry simply asks again."""
        body = json.dumps({"known_claim_ids": known_claim_ids, "wait_seconds": wait_seconds}).encode()
        data = self._call(
            "POST",
            f"{self.PREFIX}/sessions/{session_id}/cancellations",
            body=body,
            headers={"Content-Type": "application/json"},
            timeout=wait_seconds + self._timeout,
        )
        return json.loads(data)["claim_ids"]

    def download_input(self, *, ticket: dict) -> bytes:
        data = self._call("GET", ticket["url"], headers={quire_wire.TRANSFER_SECRET_HEADER: ticket["secret"]})
        return data

    def download_warm_start(self, *, claim_id: str) -> bytes:
        """The claim's warm start (the auxiliary files of the project's previous build), bound to the claim."""
        return self._call("GET", f"{self.PREFIX}/claims/{claim_id}/warm-start")

    def upload_output(
        self, *, claim_id: str, role: str, media_type: str, filename: str, data: bytes, ticket: dict | None = None
    ) -> dict:
        """Upload on the claim's own ticket for ``role`` when there is one; on a requested ticket when there is
        none or Core refuses it (expired: it lives ``transfer_ticket_seconds`` from the claim)."""
        sha256 = hashlib.sha256(data).hexdigest()
        if ticket is not None:
            declared = {
                quire_wire.MEDIA_TYPE_HEADER: media_type,
                quire_wire.SHA256_HEADER: sha256,
                quire_wire.FILENAME_HEADER: quote(filename, safe=""),
            }
            try:
                return self._put(ticket, data, declared)
            except CoreError as exc:
                if exc.code != "ticket_invalid":
                    raise
        requested = self._post(
            f"claims/{claim_id}/uploads",
            {"role": role, "media_type": media_type, "filename": filename, "size": len(data), "sha256": sha256},
        )
        return self._put(requested, data, {})

    def _put(self, ticket: dict, data: bytes, headers: dict) -> dict:
        secret = {quire_wire.TRANSFER_SECRET_HEADER: ticket["secret"]}
        headers = {**headers, **secret, "Content-Type": "application/octet-stream"}
        return json.loads(self._call("PUT", ticket["url"], body=data, headers=headers))

    def fail(self, *, claim_id: str, failure_class: str, code: str, message: str, diagnostics: dict) -> dict:
        payload = {
            "failure_class": failure_class,
            "code": code,
            "message": message,
            "diagnostics": diagnostics,
        }
        return self._post(f"claims/{claim_id}/failure", payload)

    def release(self, *, claim_id: str) -> dict:
        return self._post(f"claims/{claim_id}/release", {})

    def deliver(self, *, claim_id: str, diagnostics: dict, offers: dict[str, int] | None = None) -> dict:
        """Deliver; with ``offers``, the answer's ``claims`` refill those permits (Core never waits for work here)."""
        payload: dict = {"diagnostics": diagnostics}
        if offers:
            payload["offers"] = [{"operation": op, "permits": n} for op, n in offers.items()]
            payload["max_claims"] = sum(offers.values())
        return self._post(f"claims/{claim_id}/delivery", payload)


def _error_of(status: int, data: bytes) -> CoreError:
    try:
        error = json.loads(data)["error"]
        return CoreError(status, error.get("code", "error"), error.get("message", ""))
    except (ValueError, KeyError, TypeError):
        return CoreError(status, "error", data[:200].decode("utf-8", "replace"))
