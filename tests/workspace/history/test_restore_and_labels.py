"""Restores are new changes by the person restoring; labels name exactly the text at their moment."""

import pytest

from tests.workspace.history.conftest import history_of, put_text
from workspace import services

pytestmark = pytest.mark.django_db


def restore(client, project, version, paths=None):
    body = {} if paths is None else {"paths": paths}
    return client.post(f"/v1/projects/{project.pk}/history/{version}/restore", body, format="json")


def current_text(client, project, path):
    return client.get(f"/v1/projects/{project.pk}/files/{path}").content.decode()


@pytest.fixture
def before_the_damage(owner_client, api_client_for, coauthor, project, time_passes):
    """v2 holds both paragraphs (the owner's); v3 is the coauthor deleting the second and adding notes.tex."""
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "First paragraph.\n\nSecond paragraph.\n")
    time_passes(3600)
    put_text(api_client_for(coauthor), project, "main.tex", "First paragraph.\n")
    put_text(api_client_for(coauthor), project, "notes.tex", "notes\n")
    time_passes(3600)
    return 2


def test_restoring_a_file_gives_back_its_exact_old_text_as_a_new_version(
    owner_client, owner, project, before_the_damage
):
    response = restore(owner_client, project, before_the_damage, paths=["main.tex"])

    assert response.status_code == 200
    restored = response.json()["version"]
    assert restored["kind"] == "restore" and restored["restored_from"] == before_the_damage
    assert restored["authors"] == [owner.username]
    assert [change["path"] for change in restored["changes"]] == ["main.tex"]
    assert current_text(owner_client, project, "main.tex") == "First paragraph.\n\nSecond paragraph.\n"
    assert current_text(owner_client, project, "notes.tex") == "notes\n"  # not selected: left alone
    assert [version["id"] for version in history_of(owner_client, project)] == [4, 3, 2, 1]  # nothing rewritten


def test_restoring_the_whole_project_removes_files_made_since(owner_client, project, before_the_damage):
    restore(owner_client, project, before_the_damage)

    assert current_text(owner_client, project, "main.tex") == "First paragraph.\n\nSecond paragraph.\n"
    assert owner_client.get(f"/v1/projects/{project.pk}/files/notes.tex").status_code == 404


def test_a_restore_is_undone_by_restoring_the_version_before_it(owner_client, project, before_the_damage):
    restored = restore(owner_client, project, before_the_damage).json()["version"]

    undone = restore(owner_client, project, restored["id"] - 1).json()["version"]

    assert undone["restored_from"] == restored["id"] - 1
    assert current_text(owner_client, project, "main.tex") == "First paragraph.\n"
    assert current_text(owner_client, project, "notes.tex") == "notes\n"


def test_a_deleted_file_is_listed_and_can_be_restored(owner_client, owner, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "chapter.tex", "Chapter one.\n")
    time_passes(3600)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="chapter.tex")
    deleted = history_of(owner_client, project)[0]
    assert deleted["changes"][0]["kind"] == "delete"

    restore(owner_client, project, deleted["id"] - 1, paths=["chapter.tex"])

    assert current_text(owner_client, project, "chapter.tex") == "Chapter one.\n"


def test_an_asset_comes_back_byte_for_byte(owner_client, owner, project, time_passes):
    time_passes(3600)
    owner_client.put(f"/v1/projects/{project.pk}/files/figure.png", b"\x89PNG one", content_type="image/png")
    time_passes(3600)
    owner_client.put(f"/v1/projects/{project.pk}/files/figure.png", b"\x89PNG two", content_type="image/png")
    version_with_one = history_of(owner_client, project)[1]["id"]

    restore(owner_client, project, version_with_one, paths=["figure.png"])

    assert owner_client.get(f"/v1/projects/{project.pk}/files/figure.png").content == b"\x89PNG one"


def test_files_that_swapped_names_swap_back(owner_client, owner, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "a.tex", "was a\n")
    put_text(owner_client, project, "b.tex", "was b\n")
    time_passes(3600)
    for path, new_path in (("a.tex", "tmp.tex"), ("b.tex", "a.tex"), ("tmp.tex", "b.tex")):
        services.file_move(actor_id=owner.pk, project_id=project.pk, path=path, new_path=new_path)
    before_the_swap = history_of(owner_client, project)[1]["id"]

    restored = restore(owner_client, project, before_the_swap)

    assert restored.status_code == 200, restored.content
    assert current_text(owner_client, project, "a.tex") == "was a\n"
    assert current_text(owner_client, project, "b.tex") == "was b\n"
    changes = {change["path"]: change["old_path"] for change in restored.json()["version"]["changes"]}
    assert changes == {"a.tex": "b.tex", "b.tex": "a.tex"}


def test_a_version_whose_text_is_gone_is_an_error_never_an_empty_file(owner_client, project, time_passes):
    from workspace.models import TextContent

    time_passes(3600)
    put_text(owner_client, project, "main.tex", "the only copy\n")
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "later\n")
    old = history_of(owner_client, project)[1]["id"]
    TextContent.objects.filter(content="the only copy\n").delete()  # as a broken collector would

    served = owner_client.get(f"/v1/projects/{project.pk}/history/{old}/files/main.tex")
    restored = restore(owner_client, project, old)

    assert (served.status_code, served.json()["error"]["code"]) == (500, "history_content_missing")
    assert restored.status_code == 500
    assert current_text(owner_client, project, "main.tex") == "later\n"


def test_a_restore_that_changes_nothing_makes_no_version(owner_client, project, before_the_damage):
    newest = history_of(owner_client, project)[0]["id"]

    response = restore(owner_client, project, newest)

    assert response.json() == {"version": None}
    assert history_of(owner_client, project)[0]["id"] == newest


def test_a_label_names_exactly_the_text_at_its_moment(owner_client, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "as sent\n")
    made = owner_client.post(f"/v1/projects/{project.pk}/labels", {"name": "sent to the journal"}, format="json")
    put_text(owner_client, project, "main.tex", "as sent\nand edited a second later\n")

    assert made.status_code == 201
    labelled = made.json()["version"]
    text = owner_client.get(f"/v1/projects/{project.pk}/history/{labelled}/files/main.tex").content
    assert text == b"as sent\n"
    assert history_of(owner_client, project)[0]["id"] == labelled + 1
    listed = owner_client.get(f"/v1/projects/{project.pk}/labels").json()["labels"]
    assert [(label["name"], label["version"]) for label in listed] == [("sent to the journal", labelled)]
    assert "sent to the journal" in history_of(owner_client, project)[1]["labels"]


def test_label_names_are_unique_and_printable(owner_client, project):
    url = f"/v1/projects/{project.pk}/labels"
    assert owner_client.post(url, {"name": "v1"}, format="json").status_code == 201

    again = owner_client.post(url, {"name": "v1"}, format="json")
    blank = owner_client.post(url, {"name": "  "}, format="json")
    too_long = owner_client.post(url, {"name": "x" * 201}, format="json")
    not_text = owner_client.post(url, {"name": 5}, format="json")

    assert (again.status_code, again.json()["error"]["code"]) == (409, "label_exists")
    assert blank.status_code == too_long.status_code == not_text.status_code == 400
    assert len(owner_client.get(url).json()["labels"]) == 1
