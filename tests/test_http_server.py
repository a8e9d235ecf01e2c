"""Requests a framework test client cannot express, sent over real sockets to a real server."""

import http.client
import json
import re
import socket
from urllib.parse import urlsplit

import pytest

from tests.factories import UserFactory, bearer_token_for

pytestmark = pytest.mark.django_db(transaction=True)


def _raw_request(base_url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes exactly as given; parse the reply with the standard library's HTTP parser."""
    parts = urlsplit(base_url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def _get(path: str, headers: list[tuple[str, str]]) -> bytes:
    lines = [
        f"GET {path} HTTP/1.1",
        "Host: 127.0.0.1",
        "Connection: close",
        *(f"{k}: {v}" for k, v in headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def test_oversized_header_gets_431_in_the_error_shape(live_quire):
    status, _, body = _raw_request(live_quire, _get("/v1/projects", [("X-Padding", "a" * 20_000)]))
    assert status == 431
    assert json.loads(body)["error"]["code"] == "headers_too_large"


def test_huge_header_block_is_refused_by_the_server(live_quire):
    try:
        status, _, _ = _raw_request(live_quire, _get("/v1/projects", [("X-Padding", "a" * 200_000)]))
    except (ConnectionResetError, BrokenPipeError):
        status = 400  # the server answered 400 and closed while the headers were still arriving
    assert 400 <= status < 500
    assert _raw_request(live_quire, _get("/v1/schema", []))[0] == 200


def test_a_header_block_that_never_ends_is_cut_off_not_buffered(live_quire):
    # No blank line ever ends these headers: a server buffering without limit would wait for more.
    unterminated = b"GET /v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 300_000
    status, _, body = _raw_request(live_quire, unterminated)
    assert status == 400
    assert b"too large" in body


def test_a_large_body_sent_with_its_headers_in_one_write_is_not_taken_for_a_header_block(live_quire):
    token = bearer_token_for(UserFactory())
    body = json.dumps({"name": "n" * 300_000}).encode()
    head = (
        f"POST /v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    status, _, reply = _raw_request(live_quire, head + body)
    # The API's own answer about the name it read, not the parser's refusal of a header block.
    assert status == 400
    assert "name" in json.loads(reply)["error"]["details"]


def test_duplicate_authorization_headers_are_401_not_a_guess(live_quire):
    token = bearer_token_for(UserFactory())
    request = _get("/v1/projects", [("Authorization", f"Bearer {token}"), ("Authorization", f"Bearer {token}")])
    status, _, body = _raw_request(live_quire, request)
    assert status == 401
    assert json.loads(body)["error"]["code"] == "authentication_failed"


def test_duplicate_content_length_is_refused(live_quire):
    request = (
        b"PUT /v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}"
    )
    status, _, _ = _raw_request(live_quire, request)
    assert status == 400


def test_single_authorization_header_works_over_real_http(live_quire):
    token = bearer_token_for(UserFactory())
    status, _, body = _raw_request(live_quire, _get("/v1/projects", [("Authorization", f"Bearer {token}")]))
    assert status == 200
    assert json.loads(body) == []


def test_swagger_ui_loads_with_its_assets_from_this_server(live_quire):
    status, _, body = _raw_request(live_quire, _get("/v1/docs", []))
    assert status == 200
    page = body.decode()
    assert "swagger-ui" in page
    # Every asset from this server: no address with a host (the page also holds a random token, in which any
    # word, "cdn" say, may appear by chance).
    addresses = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert addresses and all(url.startswith("/") and not url.startswith("//") for url in addresses), addresses
    asset = next(part.split('"')[0] for part in page.split('src="')[1:] if "swagger-ui-bundle" in part)
    asset_status, _, asset_body = _raw_request(live_quire, _get(asset, []))
    assert asset_status == 200 and len(asset_body) > 10_000
