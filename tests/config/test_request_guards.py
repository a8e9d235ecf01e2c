"""Requests refused by their shape at the edge of Django's chain (config/http/middleware.py), through the
server's own HTTP application (tests/http_exchange.py): a body over its endpoint's limit is refused by its
declared length without a byte of it read, so a client that sends a large body learns at once."""

import pytest

from foundation.http.body_limits import body_limit_for
from tests.factories import ProjectFactory, bearer_token_for
from tests.http_exchange import asgi_scope, exchange
from workspace.models import ProjectFile

MiB = 1024 * 1024
PROJECT = "/v1/projects/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b11"


def _declaring(size: int) -> list[tuple[bytes, bytes]]:
    return [(b"content-length", str(size).encode())]


def test_a_declared_length_over_the_deployments_cap_is_refused_before_reading(settings):
    settings.QUIRE_MAX_REQUEST_BYTES = 1000
    status, body, read = exchange(asgi_scope(f"{PROJECT}/files/a.bin", _declaring(5000)), [b"a" * 5000])

    assert status == 413 and read == []
    assert body["error"]["code"] == "payload_too_large"
    assert body["error"]["details"] == {"limit_bytes": 1000, "size_bytes": 5000}


def test_a_declared_length_over_the_endpoints_limit_gets_the_endpoints_own_error_unread(settings):
    settings.COLLAB_MAX_UPDATE_BYTES = 1000
    path = f"{PROJECT}/documents/main.tex/updates"
    status, body, read = exchange(asgi_scope(path, _declaring(3 * MiB), "POST"), [b"u" * MiB] * 3)

    assert (status, body["error"]["code"]) == (413, "update_too_large") and read == []
    assert body["error"]["details"] == {"limit_bytes": 1000, "size_bytes": 3 * MiB}


def test_a_pdf_is_refused_at_the_librarys_limit_not_the_deployments_cap():
    path = f"{PROJECT}/library"
    status, body, read = exchange(asgi_scope(path, _declaring(100 * MiB), "POST"), [b"%" * MiB])

    assert (status, body["error"]["code"]) == (413, "payload_too_large") and read == []
    assert body["error"]["details"]["limit_bytes"] == 64 * MiB


def test_a_form_upload_is_refused_at_its_files_limit_with_the_error_the_view_gives(settings):
    settings.LIBRARY_MAX_PDF_BYTES = 3 * MiB
    path = f"{PROJECT}/library/upload".removeprefix("/v1")
    status, body, read = exchange(asgi_scope(path, _declaring(4 * MiB), "POST"), [b"a" * 65536])

    assert (status, body["error"]["code"]) == (413, "pdf_too_large") and read == []
    assert body["error"]["details"]["limit_bytes"] == 3 * MiB + 64 * 1024  # the file and a form's overhead


def test_an_endpoint_that_declares_no_limit_takes_at_most_two_mebibytes():
    status, body, read = exchange(asgi_scope("/v1/projects", _declaring(4 * MiB), "POST"), [b"{"])

    assert status == 413 and read == []
    assert body["error"]["details"] == {"limit_bytes": 2 * MiB, "size_bytes": 4 * MiB}


def test_a_chunked_body_is_refused_with_411_rather_than_read_as_empty():
    chunked = [(b"transfer-encoding", b"chunked")]
    status, body, read = exchange(asgi_scope(f"{PROJECT}/files/a.bin", chunked), [b"a" * 600] * 3)

    assert (status, body["error"]["code"]) == (411, "length_required") and read == []


def test_a_length_that_is_not_a_number_is_400():
    scope = asgi_scope(f"{PROJECT}/files/a.bin", [(b"content-length", b"ten")])
    status, body, _ = exchange(scope, [b""])

    assert (status, body["error"]["code"]) == (400, "invalid_content_length")


@pytest.mark.django_db(transaction=True)
def test_a_body_within_its_endpoints_limit_reaches_the_view():
    chunks = [b"b" * MiB] * 3  # over 2 MiB, under the files endpoint's 64 MiB
    status, _, read = exchange(asgi_scope(f"{PROJECT}/files/big.bin", _declaring(3 * MiB)), chunks)

    assert status == 401  # the view's own answer to an anonymous client: the request got that far
    assert len(read) <= len(chunks)


@pytest.mark.django_db(transaction=True)
def test_a_body_whose_client_leaves_midway_is_never_taken_for_the_whole(owner):
    project = ProjectFactory(owner=owner)
    signed_in = [(b"authorization", f"Bearer {bearer_token_for(owner)}".encode())]
    headers = [*signed_in, (b"content-type", b"application/octet-stream"), *_declaring(3 * MiB)]
    scope = asgi_scope(f"/v1/projects/{project.pk}/files/data.bin", headers)

    status, body, read = exchange(scope, [b"d" * MiB], then_leave=True)

    assert (status, body["error"]["code"]) == (400, "body_incomplete") and read == [b"d" * MiB]
    assert not ProjectFile.objects.filter(project_id=project.pk, path="data.bin").exists()


def test_a_path_that_is_not_utf8_is_400():
    scope = asgi_scope("/v1/projects/\ufffd", [], "GET", raw_path=b"/v1/projects/%ff")
    status, body, _ = exchange(scope, [b""])

    assert (status, body["error"]["code"]) == (400, "invalid_path")


@pytest.mark.parametrize(
    ("path", "limit_bytes", "code"),
    [
        (f"{PROJECT}/files/a.bin", 64 * MiB, "payload_too_large"),
        (f"{PROJECT}/documents/main.tex/updates", 3 * MiB, "update_too_large"),
        (f"{PROJECT}/library", 64 * MiB, "payload_too_large"),
        (f"{PROJECT}/library/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b12/pdf", 64 * MiB, "payload_too_large"),
        ("/v1/imports/pptx", 64 * MiB, "payload_too_large"),
        ("/internal/processing/v1/transfers/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b13", 128 * MiB, "payload_too_large"),
        ("/imports/pptx/submit", 64 * MiB + 64 * 1024, "payload_too_large"),
        (f"{PROJECT.removeprefix('/v1')}/library/upload", 64 * MiB + 64 * 1024, "pdf_too_large"),
    ],
)
def test_every_endpoint_that_takes_large_bodies_declares_its_limit(path, limit_bytes, code):
    declared = body_limit_for(path)

    assert (declared.limit_bytes(), declared.too_large.code) == (limit_bytes, code)
