"""Text files that are not UTF-8 are kept byte for byte with their detected encoding (so they build as on their
author's machine), and become live UTF-8 documents on request, their encoding declaration rewritten."""

import pytest
from django.db import transaction

from tests.factories import ProjectFactory
from workspace import snapshots
from workspace.encodings import legacy_encoding_of, utf8_converted
from workspace.models import FileKind, ProjectFile

pytestmark = pytest.mark.django_db

GERMAN = (
    "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[latin1]{inputenc}\n"
    "\\begin{document}\nDie Würde des Menschen ist unantastbar. Grüße aus Köln.\n\\end{document}\n"
)
RUSSIAN = "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью."  # noqa: RUF001
JAPANESE = "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。"


@pytest.fixture
def bare(owner):
    return ProjectFactory(owner=owner)


def put(client, project, path: str, data: bytes):
    return client.put(f"/v1/projects/{project.pk}/files/{path}", data, content_type="application/octet-stream")


@pytest.mark.parametrize(
    ("text", "encoding", "detected"),
    [
        (GERMAN, "latin-1", "iso8859-1"),  # named by its inputenc declaration
        (GERMAN.replace("[latin1]", "[T1]"), "cp1252", "cp1252"),
        (RUSSIAN, "koi8_r", "koi8-r"),
        (RUSSIAN, "cp1251", "cp1251"),
        (JAPANESE, "shift_jis", "cp932"),
    ],
)
def test_the_encoding_of_a_legacy_text_is_detected(text, encoding, detected):
    assert legacy_encoding_of(text.encode(encoding)) == detected


def test_bytes_that_are_no_text_have_no_encoding():
    assert legacy_encoding_of(bytes(range(256)) * 8) is None


def test_a_latin1_source_is_stored_byte_for_byte_with_its_encoding_and_builds_from_those_bytes(owner_client, bare):
    data = GERMAN.encode("latin-1")

    response = put(owner_client, bare, "main.tex", data)

    assert response.status_code == 201, response.content
    assert (response.json()["kind"], response.json()["encoding"]) == ("asset", "iso8859-1")
    served = owner_client.get(f"/v1/projects/{bare.pk}/files/main.tex")
    assert served.content == data
    with transaction.atomic():
        snapshot = snapshots.snapshot_freeze(project_id=bare.pk)
    assert [content for _, content in snapshots.snapshot_contents(snapshot)] == [data]


def test_converting_to_utf8_makes_a_live_text_document_and_rewrites_the_declaration(owner_client, bare):
    put(owner_client, bare, "main.tex", GERMAN.encode("latin-1"))
    legacy_id = ProjectFile.objects.get(project=bare).pk

    response = owner_client.patch(f"/v1/projects/{bare.pk}/files/main.tex", {"encoding": "utf-8"}, format="json")

    assert response.status_code == 200, response.content
    assert (response.json()["kind"], response.json()["encoding"]) == ("text", "")
    text = owner_client.get(f"/v1/projects/{bare.pk}/files/main.tex").content.decode("utf-8")
    assert text == GERMAN.replace("[latin1]{inputenc}", "[utf8]{inputenc}")
    assert ProjectFile.objects.get(project=bare).pk != legacy_id  # a new live document


def test_conversion_keeps_other_inputenc_options_and_rewrites_magic_comments():
    source = "% !TEX encoding = ISO-8859-1\n\\usepackage[latin1,extra]{inputenc}\n\\inputencoding{latin1}Ä\n"

    converted = utf8_converted(source.encode("latin-1"), "iso8859-1")

    assert converted == "% !TEX encoding = UTF-8\n\\usepackage[utf8,extra]{inputenc}\n\\inputencoding{utf8}Ä\n"


def test_only_a_legacy_text_file_can_be_converted(owner_client, bare):
    put(owner_client, bare, "fine.tex", b"plain UTF-8 \xc3\xa4")

    response = owner_client.patch(f"/v1/projects/{bare.pk}/files/fine.tex", {"encoding": "utf-8"}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "not_a_text_document"


def test_a_legacy_file_keeps_its_bytes_when_renamed(owner_client, bare):
    data = RUSSIAN.encode("koi8_r")
    put(owner_client, bare, "notes.tex", data)

    response = owner_client.patch(f"/v1/projects/{bare.pk}/files/notes.tex", {"path": "old/notes.txt"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["encoding"] == "koi8-r"
    assert owner_client.get(f"/v1/projects/{bare.pk}/files/old/notes.txt").content == data


def test_a_client_that_asks_for_a_text_document_must_send_utf8(owner_client, bare):
    response = owner_client.put(
        f"/v1/projects/{bare.pk}/files/main.tex?kind=text", GERMAN.encode("latin-1"), content_type="text/plain"
    )

    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_utf8")
    assert not ProjectFile.objects.filter(project=bare).exists()


def test_a_binary_file_with_a_text_name_is_kept_as_an_asset(owner_client, bare):
    response = put(owner_client, bare, "odd.tex", bytes(range(256)) * 4)

    assert response.status_code == 201
    assert (response.json()["kind"], response.json()["encoding"]) == (FileKind.ASSET, "")
