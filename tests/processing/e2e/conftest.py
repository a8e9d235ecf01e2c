import http.client
import json
import uuid
from urllib.parse import urlsplit

from tests.live_site import site_fixture
from tests.processing.factories import WORKER_TOKEN

E2E_OPERATIONS = ["latex.compile.pdf/v1", "pdf.index.text/v1", "test.echo/v1"]
E2E_LIMITS = {"lease_seconds": 30, "session_ttl_seconds": 30, "max_attempts": 3}


# A real Quire server on the test database with a worker identity for the e2e operations.
protocol_server = site_fixture(
    "protocol_server", "protocol", operations=E2E_OPERATIONS, limits=E2E_LIMITS, test_operations=True, workers=2
)


class RawHttp:
    """Requests exactly as given (method, path, headers, body); responses as (status, headers, bytes)."""

    def __init__(self, base_url: str, token: str | None = None):
        parts = urlsplit(base_url)
        self.host, self.port, self.token = parts.hostname, parts.port, token

    def request(self, method, path, *, body=None, headers=None, timeout=60):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        all_headers = {**({"Authorization": f"Bearer {self.token}"} if self.token else {}), **(headers or {})}
        try:
            conn.request(method, path, body=body, headers=all_headers)
            response = conn.getresponse()
            return response.status, response.headers, response.read()
        finally:
            conn.close()

    def json(self, method, path, payload=None, headers=None, **kwargs):
        body = None if payload is None else json.dumps(payload).encode()
        status, _, data = self.request(
            method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})}, **kwargs
        )
        return status, (json.loads(data) if data else None), data


class FakeWorker(RawHttp):
    """A test client that speaks the real worker protocol, with full control over request ids."""

    prefix = "/internal/processing/v1"

    def __init__(self, base_url: str, token: str = WORKER_TOKEN):
        super().__init__(base_url, token)

    def post(self, path: str, payload: dict, *, request_id: str | None = None, **kwargs):
        return self.json(
            "POST", f"{self.prefix}/{path}", {**payload, "request_id": request_id or uuid.uuid4().hex}, **kwargs
        )

    def register(self, operations: dict[str, int], *, request_id=None):
        processors = [
            {"operation": op, "processor_contract": f"{op}-fake/1", "slots": n} for op, n in operations.items()
        ]
        return self.post(
            "sessions", {"instance": "fake", "protocol_version": "1", "processors": processors}, request_id=request_id
        )
