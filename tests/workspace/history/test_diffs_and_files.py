"""A version's files, and diffs between versions or against the current files."""

import io
import zipfile

import pytest

from tests.workspace.history.conftest import history_of, put_text
from workspace import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_versions(owner_client, owner, project, time_passes):
    """v2: main.tex "alpha"; v3: "alpha\\nbeta" and notes.tex made; v4: main.tex moved to paper.tex."""
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "alpha\n")
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "alpha\nbeta\n")
    put_text(owner_client, project, "notes.tex", "n\n")
    time_passes(3600)
    services.file_move(actor_id=owner.pk, project_id=project.pk, path="main.tex", new_path="paper.tex")
    assert [version["id"] for version in history_of(owner_client, project)] == [4, 3, 2, 1]


def file_at(client, project, version, path):
    return client.get(f"/v1/projects/{project.pk}/history/{version}/files/{path}")


def test_a_version_serves_each_file_as_it_left_it(owner_client, project, three_versions):
    assert file_at(owner_client, project, 2, "main.tex").content == b"alpha\n"
    assert file_at(owner_client, project, 3, "main.tex").content == b"alpha\nbeta\n"
    assert file_at(owner_client, project, 4, "paper.tex").content == b"alpha\nbeta\n"
    assert file_at(owner_client, project, 3, "main.tex")["Content-Type"] == "text/plain; charset=utf-8"


def test_a_file_not_there_at_that_version_is_404(owner_client, project, three_versions):
    missing = file_at(owner_client, project, 2, "notes.tex")
    moved_away = file_at(owner_client, project, 4, "main.tex")
    unknown_version = file_at(owner_client, project, 99, "main.tex")

    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "file_not_found")
    assert moved_away.status_code == 404
    assert (unknown_version.status_code, unknown_version.json()["error"]["code"]) == (404, "version_not_found")


def test_a_diff_between_two_versions_is_a_unified_diff(owner_client, project, three_versions):
    response = owner_client.get(f"/v1/projects/{project.pk}/history/2/diff", {"against": "3"})

    assert response["Content-Type"] == "text/x-diff; charset=utf-8"
    assert response.content.decode() == (
        "--- a/main.tex\n+++ b/main.tex\n@@ -1 +1,2 @@\n alpha\n+beta\n"
        "--- /dev/null\n+++ b/notes.tex\n@@ -0,0 +1 @@\n+n\n"
    )


def test_the_order_of_the_two_versions_does_not_matter(owner_client, project, three_versions):
    forward = owner_client.get(f"/v1/projects/{project.pk}/history/2/diff", {"against": "3"}).content
    backward = owner_client.get(f"/v1/projects/{project.pk}/history/3/diff", {"against": "2"}).content

    assert forward == backward


def test_a_diff_against_the_current_files_names_renames_and_filters_by_path(owner_client, project, three_versions):
    put_text(owner_client, project, "paper.tex", "alpha\nbeta\ngamma\n")

    whole = owner_client.get(f"/v1/projects/{project.pk}/history/3/diff").content.decode()
    one = owner_client.get(f"/v1/projects/{project.pk}/history/3/diff", {"path": "notes.tex"}).content.decode()

    assert whole.startswith("rename from main.tex\nrename to paper.tex\n--- a/main.tex\n+++ b/paper.tex\n")
    assert "+gamma\n" in whole
    assert one == ""  # notes.tex is the same now as then


def test_the_json_diff_lists_files_with_counts_texts_and_line_authors(
    owner_client, api_client_for, owner, coauthor, project, time_passes
):
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "owner line\n")
    time_passes(3600)
    put_text(api_client_for(coauthor), project, "main.tex", "owner line\ncoauthor line\n")
    first = history_of(owner_client, project)[-1]["id"]

    body = owner_client.get(
        f"/v1/projects/{project.pk}/history/{first}/diff", {"against": "current"}, HTTP_ACCEPT="application/json"
    ).json()

    (main,) = [file for file in body["files"] if file["path"] == "main.tex"]
    assert main["new_text"] == "owner line\ncoauthor line\n"
    assert main["kind"] == "edit"
    assert main["line_authors"][0] == [owner.username]
    assert coauthor.username in main["line_authors"][1]
    assert set(main["colours"]) >= {owner.username, coauthor.username}
    assert body["to"] is None


def test_a_version_downloads_as_a_zip_of_its_files(owner_client, project, three_versions):
    response = owner_client.get(f"/v1/projects/{project.pk}/history/3/archive")

    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.read("main.tex") == b"alpha\nbeta\n"
    assert archive.read("notes.tex") == b"n\n"
    assert "version 3" in response["Content-Disposition"]


def test_lines_of_a_long_span_are_their_authors_and_the_oldest_their_authors_together(
    owner_client, api_client_for, owner, coauthor, project, time_passes, monkeypatch
):
    from workspace.history import reading

    monkeypatch.setattr(reading, "BLAME_VERSIONS", 2)
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "")
    start = history_of(owner_client, project)[0]["id"]
    text = ""
    for line, client in (("a", owner_client), ("b", api_client_for(coauthor)), ("c", owner_client),
                         ("d", api_client_for(coauthor))):  # fmt: skip
        time_passes(3600)
        text += f"{line}\n"
        put_text(client, project, "main.tex", text)

    body = owner_client.get(
        f"/v1/projects/{project.pk}/history/{start}/diff", {"path": "main.tex"}, HTTP_ACCEPT="application/json"
    ).json()

    (main,) = body["files"]
    together = sorted([owner.username, coauthor.username])
    assert [sorted(line) for line in main["line_authors"]] == [
        together,
        together,
        [owner.username],
        [coauthor.username],
    ]
