"""The agent's side of the worker protocol: a small client with intent-named methods.

Every mutating call carries a ``request_id`` made once per logical call and
reused on every retry, so a retry after a lost response gets Core's stored
answer. Connection failures and 5xx are retried with backoff until the retry
deadline, which lets an agent ride out a Core or database restart.
"""

import hashlib
import http.client
import json
import logging
import random
import ssl
import threading
import time
import uuid
from typing import Protocol
from urllib.parse import quote, urlsplit

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
    def upload_output(
        self, *, claim_id: str, role: str, media_type: str, filename: str, data: bytes, ticket: dict | None = None
    ) -> dict: ...
    def fail(self, *, claim_id: str, failure_class: str, code: str, message: str, diagnostics: dict) -> dict: ...
    def release(self, *, claim_id: str) -> dict: ...
    def deliver(self, *, claim_id: str, diagnostics: dict, offers: dict[str, int] | None = None) -> dict: ...


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
        # Over HTTPS the certificate is verified, against ca_file when given (a deployment's own CA) or the
        # system's trusted ones; the token never travels to a host that could not prove it is Core.
        self._tls = ssl.create_default_context(cafile=ca_file) if parts.scheme == "https" else None
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._tls else 80)
        self._token = token
        self._timeout = timeout
        self._retry_deadline = retry_deadline
        # Keep-alive connections between calls, shared by every thread: each job runs on a thread of its own,
        # and a connection per thread cost a TCP connection (accept, setup, teardown on both sides) per job.
        self._idle: list[http.client.HTTPConnection] = []
        self._idle_lock = threading.Lock()

    def _connection_take(self, timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection (most recently used first) or a new one; and whether it was reused."""
        with self._idle_lock:
            conn = self._idle.pop() if self._idle else None
        reused = conn is not None
        if conn is None:
            if self._tls is not None:
                conn = http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._tls)
            else:
                conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, reused

    def _connection_give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._idle_lock:
            if len(self._idle) < KEEP_IDLE_CONNECTIONS:
                self._idle.append(conn)
                return
        conn.close()

    def _exchange(self, method: str, path: str, body: bytes | None, headers: dict, timeout: float):
        conn, reused = self._connection_take(timeout)
        try:
            conn.request(method, path, body=body, headers={"Authorization": f"Bearer {self._token}", **headers})
            response = conn.getresponse()
            status, data = response.status, response.read()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            conn.close()
            if not reused:
                raise
            # The server closed an idle keep-alive connection: send once more on a fresh one.
            return self._exchange(method, path, body, headers, timeout)
        except (OSError, http.client.HTTPException):
            conn.close()
            raise
        if response.will_close:
            conn.close()
        else:
            self._connection_give_back(conn)
        return status, data

    def _call(self, method: str, path: str, *, body: bytes | None = None, headers=None, timeout=None):
        """Send with retries on connection errors, 5xx and in-progress duplicates; raise CoreError on 4xx."""
        deadline = time.monotonic() + self._retry_deadline
        delay = 0.1
        while True:
            try:
                status, data = self._exchange(method, path, body, headers or {}, timeout or self._timeout)
            except ssl.SSLCertVerificationError:
                raise  # a certificate the expected CA did not sign: no retry can help
            except (OSError, http.client.HTTPException) as exc:
                status, data, failure = 0, b"", exc
            else:
                failure = None
                if status < 400:
                    return data
                error = _error_of(status, data)
                if status < 500 and error.code != "request_in_progress":
                    raise error
            if time.monotonic() + delay > deadline:
                raise CoreUnavailable(f"{method} {path}: {failure or status}")
            logger.warning("core call failed; retrying", extra={"path": path, "status": status, "error": str(failure)})
            time.sleep(delay * (0.5 + random.random()))  # noqa: S311  jitter, not security
            delay = min(delay * 2, 5.0)

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
