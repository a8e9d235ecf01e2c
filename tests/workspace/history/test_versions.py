"""Versions: every change to a project's files is kept, grouped by pauses, labels and restores."""

import pytest

from access import facade as access
from tests.workspace.history.conftest import history_of, put_text
from workspace import services
from workspace.history import folding

pytestmark = pytest.mark.django_db


def test_a_new_project_has_one_version_making_its_files(owner_client, owner, project):
    (version,) = history_of(owner_client, project)

    assert version["id"] == 1 and version["kind"] == "edit"
    assert version["authors"] == [owner.username]
    assert {change["kind"] for change in version["changes"]} == {"create"}
    assert "main.tex" in {change["path"] for change in version["changes"]}


def test_changes_without_a_long_pause_are_one_version(owner_client, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "first\n")
    put_text(owner_client, project, "notes.tex", "notes\n")
    put_text(owner_client, project, "main.tex", "first\nsecond\n")

    newest, *older = history_of(owner_client, project)

    assert len(older) == 1
    changes = {change["path"]: change for change in newest["changes"]}
    assert changes["notes.tex"]["kind"] == "create"
    assert changes["main.tex"]["kind"] == "edit"
    assert changes["main.tex"]["added"] == 2 and changes["main.tex"]["removed"] > 0


def test_a_pause_longer_than_the_gap_starts_a_new_version(owner_client, project, settings, time_passes):
    settings.QUIRE_HISTORY_GAP_SECONDS = 300
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "one\n")
    time_passes(301)
    put_text(owner_client, project, "main.tex", "one\ntwo\n")
    time_passes(299)
    put_text(owner_client, project, "main.tex", "one\ntwo\nthree\n")

    versions = history_of(owner_client, project)

    assert [version["id"] for version in versions] == [3, 2, 1]
    assert versions[0]["changes"] == [
        {"path": "main.tex", "kind": "edit", "old_path": "main.tex", "file_kind": "text", "added": 2, "removed": 0}
    ]


def test_each_authors_change_names_its_author_in_their_colour(owner_client, api_client_for, owner, coauthor, project):
    put_text(owner_client, project, "notes.tex", "by the owner\n")
    put_text(api_client_for(coauthor), project, "main.tex", "by the coauthor\n")

    theirs, mine, made = history_of(owner_client, project)

    assert made["authors"] == [owner.username]  # the project as made is a version of its own
    assert mine["authors"] == [owner.username]
    assert theirs["authors"] == [coauthor.username]  # someone else's change, however soon, is a version of its own
    assert theirs["colours"] == {coauthor.username: access.user_colour(user_id=coauthor.pk)}
    assert [change["path"] for change in theirs["changes"]] == ["main.tex"]


def test_an_authors_changes_go_on_in_their_version_until_someone_else_changes(
    owner_client, api_client_for, owner, coauthor, project, time_passes
):
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "one\n")
    put_text(owner_client, project, "main.tex", "one\ntwo\n")
    put_text(api_client_for(coauthor), project, "main.tex", "one\ntwo\nthree\n")
    put_text(owner_client, project, "main.tex", "one\ntwo\nthree\nfour\n")

    authors = [version["authors"] for version in history_of(owner_client, project)]

    assert authors == [[owner.username], [coauthor.username], [owner.username], [owner.username]]


def test_moves_deletes_uploads_and_folders_are_history(owner_client, owner, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "figures/plot.png", "")  # an asset, by its extension
    services.file_move(actor_id=owner.pk, project_id=project.pk, path="main.tex", new_path="paper.tex")
    services.folder_move(actor_id=owner.pk, project_id=project.pk, path="figures", new_path="images")
    services.files_write_batch(actor_id=owner.pk, project_id=project.pk, files=[("refs.bib", b"@misc{a}\n")])

    changes = {change["path"]: change for change in history_of(owner_client, project)[0]["changes"]}

    assert changes["paper.tex"]["kind"] == "move" and changes["paper.tex"]["old_path"] == "main.tex"
    assert changes["images/plot.png"]["kind"] == "create"  # made and moved within the version: made where it is
    assert changes["refs.bib"]["kind"] == "create"

    time_passes(3600)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="refs.bib")
    (deleted,) = history_of(owner_client, project)[0]["changes"]
    assert deleted == {
        "path": "refs.bib",
        "kind": "delete",
        "old_path": "refs.bib",
        "file_kind": "text",
        "added": 0,
        "removed": 1,
    }


def test_a_file_made_and_deleted_within_a_version_leaves_no_trace(owner_client, owner, project, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "scratch.tex", "x\n")
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="scratch.tex")
    put_text(owner_client, project, "kept.tex", "y\n")

    assert [change["path"] for change in history_of(owner_client, project)[0]["changes"]] == ["kept.tex"]


def test_history_is_filtered_by_file_and_by_author(owner_client, api_client_for, owner, coauthor, project, time_passes):
    time_passes(3600)
    put_text(api_client_for(coauthor), project, "notes.tex", "coauthor's\n")
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "owner's\n")

    by_coauthor = history_of(owner_client, project, author=coauthor.username)
    about_notes = history_of(owner_client, project, path="notes.tex")
    by_nobody = history_of(owner_client, project, author="nobody-here")

    assert [version["id"] for version in by_coauthor] == [2]
    assert [version["id"] for version in about_notes] == [2]
    assert by_nobody == []


def test_pages_follow_one_another_without_gaps(owner_client, project, settings, time_passes, monkeypatch):
    from workspace.history import reading

    monkeypatch.setattr(reading, "PAGE", 3)
    for index in range(7):
        time_passes(3600)
        put_text(owner_client, project, "main.tex", f"text {index}\n")

    first = owner_client.get(f"/v1/projects/{project.pk}/history").json()
    second = owner_client.get(f"/v1/projects/{project.pk}/history", {"before": first["next"]}).json()
    third = owner_client.get(f"/v1/projects/{project.pk}/history", {"before": second["next"]}).json()

    ids = [version["id"] for page in (first, second, third) for version in page["versions"]]
    assert ids == [8, 7, 6, 5, 4, 3, 2, 1]
    assert third["next"] is None


def test_the_journal_is_folded_and_emptied_by_the_maintenance_step(owner_client, project):
    from workspace.history.models import FileChange, Version

    put_text(owner_client, project, "main.tex", "x\n")
    assert FileChange.objects.filter(project_id=project.pk).exists()

    assert folding.histories_fold_pending() >= 1

    assert not FileChange.objects.filter(project_id=project.pk).exists()
    assert Version.objects.filter(project_id=project.pk).exists()


def test_a_deleted_project_takes_its_history_and_journal_with_it(owner, project):
    from workspace.history.models import FileChange, Version

    services.project_delete(actor_id=owner.pk, project_id=project.pk)

    assert not FileChange.objects.filter(project_id=project.pk).exists()
    assert not Version.objects.filter(project_id=project.pk).exists()
