"""A comment's anchor follows its text through edits by anyone, anywhere, and outlives the server's memory."""

import pytest
from pycrdt import Assoc, Doc, StickyIndex, Text

from collaboration import log as document_log
from collaboration import services
from collaboration.anchors import anchor_make, anchors_resolve
from collaboration.services.outcomes import Submitted
from workspace.models import ProjectFile

pytestmark = pytest.mark.django_db

TEXT = "Über 😀 alles: the claim we make. Then more.\n"
CLAIM = "the claim we make."


def _client_of(client, project) -> Doc:
    doc = Doc()
    doc["content"] = Text()
    doc.apply_update(client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content)
    return doc


def _typed(doc: Doc, action) -> bytes:
    before = doc.get_state()
    action(doc["content"])
    return doc.get_update(before)


def _at(doc: Doc, index: int) -> int:
    return len(str(doc["content"])[:index].encode())


@pytest.fixture
def claim(owner_client, project):
    owner_client.put(f"/v1/projects/{project.pk}/files/main.tex", TEXT.encode(), content_type="text/plain")
    start = TEXT.index(CLAIM)
    body = {"path": "main.tex", "from": start, "to": start + len(CLAIM), "text": "Source?"}
    made = owner_client.post(f"/v1/projects/{project.pk}/comments", body, format="json")
    assert made.status_code == 201
    return made.json()["id"]


def _stretch(client, project) -> str | None:
    (thread,) = client.get(f"/v1/projects/{project.pk}/comments").json()["threads"]
    text = client.get(f"/v1/projects/{project.pk}/files/main.tex").content.decode()
    return None if thread["from"] is None else text[thread["from"] : thread["to"]]


def _edit(owner, project, update: bytes) -> None:
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    services.updates_accept(project_id=project.pk, file_id=file_id, submitted=[Submitted(owner.pk, update)])
    services.projection_flush(project_id=project.pk, file_id=file_id)


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda doc: doc["content"].insert(0, "Ça 🎉 "), CLAIM),  # before
        (lambda doc: doc["content"].insert(_at(doc, TEXT.index(CLAIM)), "ñ"), CLAIM),  # right before its start
        (lambda doc: doc["content"].insert(_at(doc, TEXT.index("claim")), "bold "), "the bold claim we make."),
        (lambda doc: doc["content"].insert(_at(doc, TEXT.index(CLAIM) + len(CLAIM)), "!"), CLAIM),  # after its end
        (lambda doc: doc["content"].insert(_at(doc, len(TEXT)), "The end.\n"), CLAIM),  # after
    ],
    ids=["insert-before", "insert-at-start", "insert-inside", "insert-at-end", "insert-after"],
)
def test_an_anchor_follows_inserts(owner, owner_client, project, claim, edit, expected):
    doc = _client_of(owner_client, project)

    _edit(owner, project, _typed(doc, lambda _: edit(doc)))

    assert _stretch(owner_client, project) == expected


def _delete(doc: Doc, start: int, end: int) -> None:
    del doc["content"][_at(doc, start) : _at(doc, end)]


@pytest.mark.parametrize(
    "start, end, expected",
    [
        (0, 5, CLAIM),  # "Über " before it
        (TEXT.index(CLAIM) + 4, TEXT.index(CLAIM) + 10, "the we make."),  # "claim " inside it
        (TEXT.index(CLAIM) - 3, TEXT.index(CLAIM) + 4, "claim we make."),  # across its start
        (TEXT.index(CLAIM) + 13, len(TEXT), "the claim we "),  # across its end
        (TEXT.index(CLAIM), TEXT.index(CLAIM) + len(CLAIM), None),  # all of it: "on deleted text"
    ],
    ids=["before", "inside", "across-start", "across-end", "all-of-it"],
)
def test_an_anchor_follows_deletes(owner, owner_client, project, claim, start, end, expected):
    doc = _client_of(owner_client, project)

    _edit(owner, project, _typed(doc, lambda _: _delete(doc, start, end)))

    assert _stretch(owner_client, project) == expected


def test_a_thread_on_deleted_text_is_still_listed(owner, owner_client, project, claim):
    doc = _client_of(owner_client, project)
    _edit(owner, project, _typed(doc, lambda _: _delete(doc, 0, len(TEXT))))

    (thread,) = owner_client.get(f"/v1/projects/{project.pk}/comments").json()["threads"]

    assert (thread["from"], thread["to"], thread["quote"]) == (None, None, CLAIM)


def test_an_anchor_survives_the_server_forgetting_and_the_log_folding(owner, owner_client, project, claim):
    doc = _client_of(owner_client, project)
    _edit(owner, project, _typed(doc, lambda text: text.insert(0, "Ça ")))
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk

    services.log_compact(file_id=file_id)
    document_log.documents.drop(file_id)

    assert _stretch(owner_client, project) == CLAIM


def test_anchors_are_yjs_relative_positions_of_the_first_and_last_character():
    doc = Doc(client_id=42)
    doc["content"] = text = Text()
    text += "aé😀 word end"

    anchor = anchor_make(doc, 4, 8)  # "word": é is one UTF-16 unit and 😀 two, so 'w' is clock 5 of client 42

    assert StickyIndex.decode(anchor.start).to_json() == {"item": {"client": 42, "clock": 5}, "assoc": 0}
    assert StickyIndex.decode(anchor.end).to_json() == {"item": {"client": 42, "clock": 8}, "assoc": -1}
    assert anchors_resolve(doc, [anchor]) == [(4, 8)]


def test_pycrdt_sticky_index_still_mixes_byte_and_utf16_offsets():
    """Why ``collaboration/anchors.py`` finds ids itself (y-crdt/pycrdt#382). When this fails, pycrdt resolves
    a sticky index right after a deletion in non-ASCII text: anchors may then use ``StickyIndex`` directly."""
    doc = Doc()
    doc["content"] = text = Text()
    text += "Hello wörld, this"
    end_of_world = StickyIndex.new(text, len("Hello wörld".encode()), Assoc.BEFORE)

    del text[7:9]  # "ö"

    assert end_of_world.get_index() != len(b"Hello wrld")
