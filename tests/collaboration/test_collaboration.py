import pytest
from pycrdt import Doc, Text

from collaboration import log as document_log
from collaboration import services
from collaboration.models import AcceptedUpdate, DocumentLog
from tests.concurrency import run_together
from workspace.models import Project, ProjectFile

pytestmark = pytest.mark.django_db


def _client_from_state(state: bytes) -> Doc:
    doc = Doc()
    doc["content"] = Text()
    doc.apply_update(state)
    return doc


def _edit(doc: Doc, action) -> bytes:
    before = doc.get_state()
    action(doc["content"])
    return doc.get_update(before)


def _file_id(project, path="main.tex") -> int:
    return ProjectFile.objects.get(project=project, path=path).pk


def _workspace_text(owner_client, project, path="main.tex") -> str:
    return owner_client.get(f"/v1/projects/{project.pk}/files/{path}").content.decode()


def _post_update(client, project, update: bytes, path="main.tex"):
    return client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/{path}/updates",
        update,
        content_type="application/octet-stream",
    )


def test_two_clients_concurrent_updates_converge(owner_client, project):
    state = owner_client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content
    alice, bob = _client_from_state(state), _client_from_state(state)
    alice_update = _edit(alice, lambda text: text.insert(0, "% Alice\n"))
    bob_update = _edit(bob, lambda text: text.insert(len(str(text).encode()), "% Bob\n"))

    assert _post_update(owner_client, project, alice_update).status_code == 200
    assert _post_update(owner_client, project, bob_update).status_code == 200

    alice.apply_update(bob_update)
    bob.apply_update(alice_update)
    assert str(alice["content"]) == str(bob["content"])
    assert _workspace_text(owner_client, project) == str(alice["content"])
    assert str(alice["content"]).startswith("% Alice\n") and str(alice["content"]).endswith("% Bob\n")


def test_projection_equals_the_pycrdt_document_text(owner_client, project):
    state = owner_client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content
    client = _client_from_state(state)
    for word in ["Grüße ", "ĳ ", "😀 ", "ÆØÅ "]:
        update = _edit(client, lambda text, word=word: text.insert(0, word))
        assert _post_update(owner_client, project, update).status_code == 200

    projected = services.projection_read(file_id=_file_id(project))
    assert projected == str(client["content"])
    assert _workspace_text(owner_client, project) == projected


def test_compaction_does_not_change_the_projected_text(owner_client, owner, project, monkeypatch):
    monkeypatch.setattr(document_log, "SNAPSHOT_EVERY", 5)
    for index in range(12):
        text = _workspace_text(owner_client, project) + f"line {index}\n"
        services.text_edit(actor_id=owner.pk, project_id=project.pk, path="main.tex", text=text)
    file_id = _file_id(project)
    before = services.projection_read(file_id=file_id)
    assert DocumentLog.objects.get(file_id=file_id).snapshot_seq > 0

    services.log_compact(file_id=file_id)

    assert AcceptedUpdate.objects.filter(log__file_id=file_id).count() == 0
    assert services.projection_read(file_id=file_id) == before == _workspace_text(owner_client, project)


def test_accepting_an_update_bumps_the_generation(owner_client, project):
    generation = Project.objects.get(pk=project.pk).generation
    client = _client_from_state(owner_client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content)
    _post_update(owner_client, project, _edit(client, lambda text: text.insert(0, "x")))
    assert Project.objects.get(pk=project.pk).generation == generation + 1


def test_a_retried_update_is_acknowledged_without_being_stored_twice(owner_client, project):
    client = _client_from_state(owner_client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content)
    update = _edit(client, lambda text: text.insert(0, "once "))
    first = _post_update(owner_client, project, update).json()
    again = _post_update(owner_client, project, update).json()
    assert again == {**first, "changed": False}
    assert _workspace_text(owner_client, project).count("once ") == 1


def test_an_update_depending_on_unknown_changes_is_refused(owner_client, project):
    other = Doc()
    other["content"] = Text()
    other["content"].insert(0, "base ")
    base = other.get_state()
    other["content"].insert(0, "more ")
    dependent = other.get_update(base)
    count = AcceptedUpdate.objects.count()
    response = _post_update(owner_client, project, dependent)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_update"
    assert AcceptedUpdate.objects.count() == count


def test_an_update_touching_another_root_is_refused(owner_client, project):
    from pycrdt import Map

    other = Doc()
    other["settings"] = Map()
    other["settings"]["x"] = 1
    response = _post_update(owner_client, project, other.get_update())
    assert response.status_code == 400


def test_a_raw_put_is_reconciled_into_the_log(owner_client, project):
    state = owner_client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content
    stale_client = _client_from_state(state)
    owner_client.put(f"/v1/projects/{project.pk}/files/main.tex", b"replaced\n", content_type="text/plain")
    update = _edit(stale_client, lambda text: text.insert(0, "A"))

    assert _post_update(owner_client, project, update).status_code == 200

    merged = _workspace_text(owner_client, project)
    assert "replaced" in merged and merged.startswith("A")
    assert services.projection_read(file_id=_file_id(project)) == merged


def test_editor_save_records_a_server_update(owner, project):
    accepted = services.text_edit(actor_id=owner.pk, project_id=project.pk, path="main.tex", text="new text\n")
    assert accepted.changed
    assert AcceptedUpdate.objects.filter(log__file_id=_file_id(project), origin="server").exists()
    assert services.projection_read(file_id=_file_id(project)) == "new text\n"


@pytest.mark.django_db(transaction=True)
def test_concurrent_clients_on_separate_connections_converge(api_client_for, owner):
    from tests.factories import ProjectFactory

    project = ProjectFactory(owner=owner, starter=True)
    client = api_client_for(owner)
    state = client.get(f"/v1/projects/{project.pk}/documents/main.tex/state").content
    docs = [_client_from_state(state) for _ in range(4)]
    updates = [_edit(doc, lambda text, i=i: text.insert(0, f"[{i}]")) for i, doc in enumerate(docs)]
    statuses = []

    def send(update):
        return lambda: statuses.append(_post_update(api_client_for(owner), project, update).status_code)

    assert run_together(*[send(update) for update in updates]) == []
    assert statuses == [200] * 4
    reference = _client_from_state(state)
    for update in updates:
        reference.apply_update(update)
    assert _workspace_text(client, project) == str(reference["content"])


def test_a_large_rewrite_is_one_replacement_so_the_fence_is_not_held_for_a_quadratic_diff():
    from collaboration.ydoc import FINE_DIFF_LIMIT, _edit_operations

    old, new = "keep " + "a b " * FINE_DIFF_LIMIT + " end", "keep " + "b a " * FINE_DIFF_LIMIT + " end"

    [(tag, old_start, old_end, new_start, new_end)] = _edit_operations(old, new)
    assert new_end - new_start > FINE_DIFF_LIMIT
    assert (tag, old_start, new_start) == ("replace", 5, 5)
    assert old_end - old_start > FINE_DIFF_LIMIT
