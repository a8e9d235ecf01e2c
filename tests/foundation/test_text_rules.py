"""Text PostgreSQL cannot hold (NUL, a lone surrogate) is refused where a person sends it and dropped where
it comes from inside a file: never a 500 (foundation/text_rules.py)."""

import json
from urllib.parse import unquote

import pytest

from library.models import LibraryDocument
from tests.http_exchange import asgi_scope, exchange
from tests.library.factories import accept
from tests.library.pdfs import text_pdf
from workspace.models import Project

PROJECT = "/v1/projects/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b11"


@pytest.mark.parametrize(
    ("path", "query"),
    [
        (f"{PROJECT}/library/search", b"q=%00x"),
        ("/v1/imports/pptx", b"filename=%00x.pptx"),
        (f"{PROJECT}/files/a%00b.tex", b""),
        (f"{PROJECT}/library", b"title=a%00"),
    ],
)
@pytest.mark.django_db
def test_a_nul_in_a_url_is_refused_before_any_view(path, query):
    scope = asgi_scope(unquote(path), [], method="GET")  # as an ASGI server gives it: path decoded, raw_path not
    scope["raw_path"], scope["query_string"] = path.encode(), query

    status, body, _ = exchange(scope, [b""])
    error = body["error"]

    assert (status, error["code"], error["details"]) == (400, "invalid_text", {"where": "url"})


@pytest.mark.parametrize("name", ["a\u0000b", "\ud800", "x\udfff"])
def test_json_strings_that_postgresql_cannot_hold_are_400_and_change_nothing(owner_client, name):
    before = Project.objects.count()
    body = json.dumps({"name": name, "type": "latex"}).encode()  # ensure_ascii: "\u0000", "\ud800" escapes

    response = owner_client.post("/v1/projects", body, content_type="application/json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_text"
    assert Project.objects.count() == before


def test_a_nul_in_a_json_key_is_refused_too(owner_client):
    response = owner_client.post(
        "/v1/projects", b'{"name": "fine", "type": "latex", "x\\u0000": 1}', content_type="application/json"
    )

    assert response.json()["error"]["code"] == "invalid_text"


def test_an_escaped_backslash_before_u0000_is_ordinary_text(owner_client):
    response = owner_client.post(
        "/v1/projects", b'{"name": "TeX \\\\u0000 macro", "type": "latex"}', content_type="application/json"
    )

    assert response.status_code == 201, response.content
    assert response.json()["name"] == "TeX \\u0000 macro"


@pytest.mark.django_db
def test_a_pdf_whose_title_holds_nul_and_bidi_overrides_is_accepted_with_them_dropped(
    owner, project, configure_deployment
):
    configure_deployment()
    accepted = accept(owner, project, text_pdf(["words"], title="Annual\x00 report \u202egnp.exe"), key="nul-title")

    title = LibraryDocument.objects.get(pk=accepted.document_id).title
    assert title == "Annual report gnp.exe"
