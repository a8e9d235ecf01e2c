"""When the agent's HTTP client asks Core again: connection failures, 5xx and a duplicate still in progress, with
the same request_id, until the retry deadline; never a 4xx, and never a certificate another CA signed."""

import json
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import trustme

from quire_worker.client import CoreError, CoreUnavailable, HttpCoreClient

HEARTBEAT = {"session_id": "s", "state": "active"}


class _Scripted(BaseHTTPRequestHandler):
    """Answers each request with the next of the server's ``answers`` (status, body), the last one over and over;
    records every request body it was sent."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.server.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        status, answer = self.server.answers.pop(0) if len(self.server.answers) > 1 else self.server.answers[0]
        body = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _serve(server):
    server.bodies, server.answers = [], [(200, HEARTBEAT)]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def core():
    server = _serve(ThreadingHTTPServer(("127.0.0.1", 0), _Scripted))
    yield server
    server.shutdown()
    server.server_close()


def _client(server, *, scheme="http", retry_deadline=10.0, ca_file=None) -> HttpCoreClient:
    url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    return HttpCoreClient(url, "token", retry_deadline=retry_deadline, ca_file=ca_file)


def _refusal(code: str) -> dict:
    return {"error": {"code": code, "message": code}}


def test_5xx_answers_are_retried_with_the_same_request_id_until_one_succeeds(core):
    core.answers = [(503, _refusal("unavailable")), (500, _refusal("error")), (200, HEARTBEAT)]

    assert _client(core).session_heartbeat(session_id="s", health={}) == HEARTBEAT

    assert len(core.bodies) == 3
    assert len({body["request_id"] for body in core.bodies}) == 1


def test_a_duplicate_still_in_progress_is_asked_again_with_the_same_request_id(core):
    core.answers = [(409, _refusal("request_in_progress")), (200, HEARTBEAT)]

    assert _client(core).session_heartbeat(session_id="s", health={}) == HEARTBEAT

    assert len(core.bodies) == 2 and core.bodies[0] == core.bodies[1]


@pytest.mark.parametrize(("status", "code"), [(409, "claim_lost"), (400, "validation_error"), (429, "too_many")])
def test_a_4xx_is_raised_at_once(core, status, code):
    core.answers = [(status, _refusal(code)), (200, HEARTBEAT)]

    with pytest.raises(CoreError) as refused:
        _client(core).session_heartbeat(session_id="s", health={})

    assert (refused.value.status, refused.value.code) == (status, code)
    assert len(core.bodies) == 1


def test_a_core_failing_until_the_deadline_is_unavailable(core):
    core.answers = [(502, _refusal("bad_gateway"))]

    started = time.monotonic()
    with pytest.raises(CoreUnavailable, match="502"):
        _client(core, retry_deadline=1.0).session_heartbeat(session_id="s", health={})

    assert len(core.bodies) > 1
    assert time.monotonic() - started < 1.0 + 5.0  # the deadline, and at most one backoff past it


def test_a_core_nobody_listens_for_is_unavailable_at_the_deadline():
    with socket.socket() as unbound:
        unbound.bind(("127.0.0.1", 0))
        port = unbound.getsockname()[1]  # nothing listens on it: every connection is refused
        client = HttpCoreClient(f"http://127.0.0.1:{port}", "token", retry_deadline=1.0)

        with pytest.raises(CoreUnavailable):
            client.session_heartbeat(session_id="s", health={})


@pytest.fixture
def tls_core(tmp_path):
    authority = trustme.CA()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("127.0.0.1").configure_cert(tls)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    authority.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    yield _serve(server), tmp_path / "ca.pem"
    server.shutdown()
    server.server_close()


def test_a_core_whose_certificate_the_ca_signed_is_spoken_to(tls_core):
    server, ca = tls_core

    assert _client(server, scheme="https", ca_file=str(ca)).session_heartbeat(session_id="s", health={}) == HEARTBEAT


def test_a_certificate_another_ca_signed_is_refused_at_once_without_retries(tls_core, tmp_path):
    server, _ = tls_core
    stranger = tmp_path / "stranger.pem"
    trustme.CA().cert_pem.write_to_path(str(stranger))
    client = _client(server, scheme="https", retry_deadline=30.0, ca_file=str(stranger))

    started = time.monotonic()
    with pytest.raises(ssl.SSLCertVerificationError):
        client.session_heartbeat(session_id="s", health={})

    assert time.monotonic() - started < 5  # not the retries until the deadline a reachable Core would get
    assert server.bodies == []
