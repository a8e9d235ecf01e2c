"""Folders: real entries of the tree (empty ones too), made, renamed, moved with everything in them and
deleted, each one fenced change; a path is a file or a folder, and no two names differ only in case."""

import threading
import unicodedata

import pytest
from django.db import connection, transaction

from access.services import member_set
from tests.factories import ProjectFactory, UserFactory
from workspace import services
from workspace.models import Project, ProjectFile
from workspace.snapshots import pin_release, snapshot_freeze

pytestmark = pytest.mark.django_db


def put(client, project, path: str, data: bytes = b"text\n"):
    return client.put(f"/v1/projects/{project.pk}/files/{path}", data, content_type="application/octet-stream")


def make_folder(client, project, path: str):
    return client.post(f"/v1/projects/{project.pk}/folders", {"path": path}, format="json")


def tree(client, project) -> list[tuple[str, str]]:
    response = client.get(f"/v1/projects/{project.pk}/files")
    assert response.status_code == 200, response.content
    return [(entry["path"], entry["kind"]) for entry in response.json()]


def assert_refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    return response.json()["error"]["details"]


@pytest.fixture
def bare(owner):
    return ProjectFactory(owner=owner)


def test_a_folder_is_made_with_the_folders_it_sits_in_and_listed_while_empty(owner_client, bare):
    response = make_folder(owner_client, bare, "chapters/appendix")

    assert response.status_code == 201
    assert response.json() == {"path": "chapters/appendix", "files": 0, "folders": 2}
    assert tree(owner_client, bare) == [("chapters", "folder"), ("chapters/appendix", "folder")]
    assert make_folder(owner_client, bare, "chapters/appendix").json()["folders"] == 0  # there already


def test_the_listing_puts_each_folder_before_what_is_in_it(owner_client, bare):
    for path in ("z.tex", "a/b/c.tex", "a/a.tex", "a.tex"):
        assert put(owner_client, bare, path).status_code == 201

    assert tree(owner_client, bare) == [
        ("a", "folder"),
        ("a/a.tex", "text"),
        ("a/b", "folder"),
        ("a/b/c.tex", "text"),
        ("a.tex", "text"),
        ("z.tex", "text"),
    ]


def test_a_folder_outlives_its_last_file(owner_client, bare):
    put(owner_client, bare, "figures/plot.png", b"\x89PNG")

    assert owner_client.delete(f"/v1/projects/{bare.pk}/files/figures/plot.png").status_code == 204

    assert tree(owner_client, bare) == [("figures", "folder")]


def test_moving_a_folder_moves_everything_in_it_in_one_change_and_files_keep_their_ids(owner_client, bare):
    for path in ("src/main.tex", "src/parts/one.tex", "src/parts/fig.png", "other.tex"):
        put(owner_client, bare, path)
    make_folder(owner_client, bare, "src/empty")
    ids = dict(ProjectFile.objects.filter(project=bare).values_list("path", "pk"))
    generation = Project.objects.get(pk=bare.pk).generation

    response = owner_client.patch(f"/v1/projects/{bare.pk}/folders/src", {"path": "book/source"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json() == {"path": "book/source", "files": 3, "folders": 3}
    assert tree(owner_client, bare) == [
        ("book", "folder"),
        ("book/source", "folder"),
        ("book/source/empty", "folder"),
        ("book/source/main.tex", "text"),
        ("book/source/parts", "folder"),
        ("book/source/parts/fig.png", "asset"),
        ("book/source/parts/one.tex", "text"),
        ("other.tex", "text"),
    ]
    moved = dict(ProjectFile.objects.filter(project=bare).values_list("path", "pk"))
    assert moved["book/source/parts/one.tex"] == ids["src/parts/one.tex"]
    assert Project.objects.get(pk=bare.pk).generation == generation + 1


def test_a_folder_cannot_move_into_itself(owner_client, bare):
    make_folder(owner_client, bare, "a/b")

    response = owner_client.patch(f"/v1/projects/{bare.pk}/folders/a", {"path": "a/b/a"}, format="json")

    assert_refused(response, 409, "path_conflict")
    assert tree(owner_client, bare) == [("a", "folder"), ("a/b", "folder")]


def test_deleting_a_folder_that_holds_files_says_how_many_unless_recursive(owner_client, bare):
    for path, data in (("figs/a.png", b"1" * 10), ("figs/sub/b.png", b"2" * 5), ("keep.tex", b"k")):
        put(owner_client, bare, path, data)

    refused = owner_client.delete(f"/v1/projects/{bare.pk}/folders/figs")

    assert assert_refused(refused, 409, "folder_not_empty") == {"path": "figs", "files": 2, "folders": 1}
    assert owner_client.delete(f"/v1/projects/{bare.pk}/folders/figs?recursive=true").status_code == 204
    assert tree(owner_client, bare) == [("keep.tex", "text")]
    project = Project.objects.get(pk=bare.pk)
    assert (project.file_count, project.total_bytes) == (1, 1)


def test_an_empty_folder_is_deleted_without_asking(owner_client, bare):
    make_folder(owner_client, bare, "empty")

    assert owner_client.delete(f"/v1/projects/{bare.pk}/folders/empty").status_code == 204
    assert tree(owner_client, bare) == []
    assert_refused(owner_client.delete(f"/v1/projects/{bare.pk}/folders/empty"), 404, "folder_not_found")


def test_a_name_is_a_file_or_a_folder_never_both(owner_client, bare):
    put(owner_client, bare, "notes.txt")
    make_folder(owner_client, bare, "figures")

    assert_refused(make_folder(owner_client, bare, "notes.txt"), 409, "path_conflict")
    assert_refused(make_folder(owner_client, bare, "notes.txt/inner"), 409, "path_conflict")
    assert_refused(put(owner_client, bare, "figures"), 409, "path_conflict")
    assert_refused(put(owner_client, bare, "notes.txt/inside.tex"), 409, "path_conflict")
    assert tree(owner_client, bare) == [("figures", "folder"), ("notes.txt", "text")]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("main.tex", "Main.tex"),
        ("figures/a.png", "Figures/b.png"),
        ("figures/a.png", "FIGURES"),
        ("Chapter/x.tex", "chapter/X.tex"),
    ],
)
def test_names_that_differ_only_in_case_are_refused(owner_client, bare, first, second):
    assert put(owner_client, bare, first).status_code == 201
    before = tree(owner_client, bare)

    response = put(owner_client, bare, second) if "." in second else make_folder(owner_client, bare, second)

    details = assert_refused(response, 409, "path_conflict")
    assert details["rule"] == "case_insensitive_clash"
    assert tree(owner_client, bare) == before


def test_a_rename_that_changes_only_case_is_allowed(owner_client, bare):
    put(owner_client, bare, "figures/a.png", b"png")
    put(owner_client, bare, "intro.tex")

    folder = owner_client.patch(f"/v1/projects/{bare.pk}/folders/figures", {"path": "Figures"}, format="json")
    file = owner_client.patch(f"/v1/projects/{bare.pk}/files/intro.tex", {"path": "Intro.tex"}, format="json")

    assert (folder.status_code, file.status_code) == (200, 200)
    assert tree(owner_client, bare) == [("Figures", "folder"), ("Figures/a.png", "asset"), ("Intro.tex", "text")]


def test_moving_a_file_into_a_new_folder_makes_it(owner_client, bare):
    put(owner_client, bare, "intro.tex")
    file_id = ProjectFile.objects.get(project=bare).pk

    response = owner_client.patch(f"/v1/projects/{bare.pk}/files/intro.tex", {"path": "parts/intro.tex"}, format="json")

    assert response.json()["id"] == file_id
    assert tree(owner_client, bare) == [("parts", "folder"), ("parts/intro.tex", "text")]


def test_folder_paths_follow_the_path_rules(owner_client, bare):
    nfd = unicodedata.normalize("NFD", "Übungen")
    make_folder(owner_client, bare, nfd)

    assert tree(owner_client, bare) == [("Übungen", "folder")]  # stored NFC, as file paths are
    for bad in ("../escape", "a//b", "/absolute", "evil\u202etxt", "zero\u200bwidth"):
        assert_refused(make_folder(owner_client, bare, bad), 400, "invalid_path")
    assert tree(owner_client, bare) == [("Übungen", "folder")]


def test_a_viewer_cannot_change_folders_and_a_stranger_sees_none(owner, owner_client, bare, api_client_for):
    make_folder(owner_client, bare, "kept")
    viewer, stranger = UserFactory(), UserFactory()
    member_set(actor_id=owner.pk, project_id=bare.pk, username=viewer.username, role="viewer")
    as_viewer, as_stranger = api_client_for(viewer), api_client_for(stranger)

    assert_refused(make_folder(as_viewer, bare, "new"), 403, "forbidden")
    assert_refused(as_viewer.delete(f"/v1/projects/{bare.pk}/folders/kept"), 403, "forbidden")
    for response in (
        make_folder(as_stranger, bare, "new"),
        as_stranger.patch(f"/v1/projects/{bare.pk}/folders/kept", {"path": "x"}, format="json"),
        as_stranger.delete(f"/v1/projects/{bare.pk}/folders/kept"),
        as_stranger.get(f"/v1/projects/{bare.pk}/files"),
    ):
        assert_refused(response, 404, "project_not_found")
    assert tree(owner_client, bare) == [("kept", "folder")]


@pytest.mark.django_db(transaction=True)
def test_a_capture_sees_a_folder_move_whole_or_not_at_all(owner):
    project, owner_id = ProjectFactory(owner=owner), owner.pk
    for number in range(40):
        services.file_write(actor_id=owner_id, project_id=project.pk, path=f"old/part{number}.tex", data=b"x")
    frozen: list[set[str]] = []
    done = threading.Event()

    def capture_repeatedly():
        try:
            while not done.is_set():
                with transaction.atomic():
                    snapshot = snapshot_freeze(project_id=project.pk)
                pin_release(pin_id=snapshot.pin_id)
                frozen.append({file.path.split("/")[0] for file in snapshot.files})
        finally:
            connection.close()

    capturer = threading.Thread(target=capture_repeatedly)
    capturer.start()
    try:
        for number in range(10):
            services.folder_move(
                actor_id=owner_id, project_id=project.pk, path="old" if number % 2 == 0 else "new",
                new_path="new" if number % 2 == 0 else "old",
            )  # fmt: skip
    finally:
        done.set()
        capturer.join()

    assert frozen and all(len(prefixes) == 1 for prefixes in frozen), frozen
