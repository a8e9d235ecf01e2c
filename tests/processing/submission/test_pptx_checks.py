import io
import os
import zipfile

import pytest

from processing.models import IdempotencyReservation, ProcessingJob

pytestmark = pytest.mark.django_db

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
CONTENT_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Override PartName="/ppt/presentation.xml" ContentType="{ct}"/></Types>'
)
RELS = (
    '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"'
    ' Target="ppt/presentation.xml"/></Relationships>'
)
MAIN = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"


def package(entries: dict[str, bytes | str] | None = None, *, content_type: str = MAIN, drop=()) -> bytes:
    parts = {
        "[Content_Types].xml": CONTENT_TYPES.format(ct=content_type),
        "_rels/.rels": RELS,
        "ppt/presentation.xml": "<p:presentation xmlns:p='urn:p'/>",
        **(entries or {}),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            if name not in drop:
                archive.writestr(name, data)
    return buffer.getvalue()


@pytest.fixture(autouse=True)
def extended(settings, configure_deployment):
    settings.QUIRE_DISTRIBUTION = "extended"
    configure_deployment(operations=["latex.compile.pdf/v1", "pptx.import.typst/v1"])


def _import(client, data: bytes, *, query="filename=deck.pptx", content_type=PPTX, key="import-1"):
    return client.generic(
        "POST", f"/v1/imports/pptx?{query}", data, content_type=content_type, HTTP_IDEMPOTENCY_KEY=key
    )


def _assert_refused(response, status, code):
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert ProcessingJob.objects.count() == 0 and IdempotencyReservation.objects.count() == 0


def test_a_valid_presentation_is_accepted_as_a_requester_owned_job(owner_client):
    response = _import(owner_client, package(), query="filename=deck.pptx&input_profile=faithful")
    assert response.status_code == 202
    job = response.json()
    assert job["operation"] == "pptx.import.typst/v1" and job["project_id"] is None
    assert job["state"] == "queued" and job["input_profile"] == "faithful"


def test_the_default_profile_is_editable(owner_client):
    assert _import(owner_client, package()).json()["input_profile"] == "editable"


def test_not_a_zip(owner_client):
    _assert_refused(_import(owner_client, b"PK\x03\x04 not really"), 400, "pptx_not_a_zip")


@pytest.mark.parametrize("name", ["../evil.xml", "/etc/evil.xml", "ppt/../../evil.xml", "C:/evil.xml", "a\\b.xml"])
def test_unsafe_entry_names(owner_client, name):
    _assert_refused(_import(owner_client, package({name: "x"})), 400, "pptx_unsafe_entry_name")


def test_too_many_entries(owner_client):
    entries = {f"ppt/media/{index}.bin": b"" for index in range(5001)}
    _assert_refused(_import(owner_client, package(entries)), 400, "pptx_too_many_entries")


def test_a_zip_bomb_entry_is_refused_by_its_ratio(owner_client):
    _assert_refused(
        _import(owner_client, package({"ppt/media/bomb.bin": b"\0" * 20_000_000})), 400, "pptx_compression_ratio"
    )


def test_missing_content_types(owner_client):
    _assert_refused(_import(owner_client, package(drop={"[Content_Types].xml"})), 400, "pptx_missing_content_types")


def test_a_word_document_is_not_a_presentation(owner_client):
    docx_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    _assert_refused(_import(owner_client, package(content_type=docx_type)), 400, "pptx_missing_presentation")


def test_macro_enabled_presentations_are_refused(owner_client):
    macro = "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"
    _assert_refused(_import(owner_client, package(content_type=macro)), 400, "pptx_missing_presentation")


def test_xml_entity_expansion_is_refused(owner_client):
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">&lol2;</Types>'
    )
    _assert_refused(_import(owner_client, package({"[Content_Types].xml": laughs})), 400, "pptx_invalid_xml")


def test_external_entities_are_refused(owner_client):
    xxe = '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><Types>&x;</Types>'
    _assert_refused(_import(owner_client, package({"[Content_Types].xml": xxe})), 400, "pptx_invalid_xml")


def test_wrong_content_type_is_415(owner_client):
    _assert_refused(_import(owner_client, package(), content_type="text/plain"), 415, "unsupported_media_type")


def test_missing_filename_is_400(owner_client):
    _assert_refused(_import(owner_client, package(), query=""), 400, "invalid_options")


def test_unknown_profile_is_400(owner_client):
    _assert_refused(
        _import(owner_client, package(), query="filename=d.pptx&input_profile=magic"), 400, "invalid_options"
    )


def test_an_input_over_the_limit_is_413(owner_client, configure_deployment):
    configure_deployment(operations=["pptx.import.typst/v1"], limits={"input_bytes": 1000})
    _assert_refused(
        _import(owner_client, package({"ppt/media/big.bin": bytes(range(256)) * 8})), 413, "payload_too_large"
    )


def test_the_community_distribution_refuses_imports(owner_client, settings):
    settings.QUIRE_DISTRIBUTION = "community"
    _assert_refused(_import(owner_client, package()), 404, "operation_not_enabled")


def test_a_replayed_import_returns_the_same_job(owner_client):
    deck = package()  # once: a zip records its members' times, so two packages a second apart differ
    first = _import(owner_client, deck).json()
    again = _import(owner_client, deck)
    assert again.status_code == 200 and again.json()["id"] == first["id"]
    other_bytes = _import(owner_client, package({"ppt/extra.xml": "<x/>"}))
    assert other_bytes.status_code == 409


def test_a_deck_of_many_small_zero_filled_parts_is_refused_by_its_package_ratio(owner_client):
    """Each part is under the per-part ratio check's threshold; together they expand over 100× the upload."""
    parts = {f"ppt/media/fill{index}.bin": b"\0" * 64 * 1024 for index in range(400)}  # 25 MiB from ~70 kB

    _assert_refused(_import(owner_client, package(parts)), 400, "pptx_compression_ratio")


def test_a_deck_whose_parts_do_not_compress_is_not_refused_for_its_size(owner_client):
    parts = {f"ppt/media/picture{index}.jpg": os.urandom(1024 * 1024) for index in range(20)}  # 20 MiB, 1:1

    assert _import(owner_client, package(parts)).status_code == 202
