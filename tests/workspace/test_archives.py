"""Zip archives in (into a folder of a project, or as a new project) and out: every member judged before anything
is written, one fenced change, and a download that gives back exactly what is stored."""

import io
import stat
import struct
import zipfile

import pytest

from access.services import member_remove, member_set
from collaboration.models import AcceptedUpdate, UpdateOrigin
from tests.factories import ProjectFactory, UserFactory
from workspace.models import Project, ProjectFile, ProjectFolder

pytestmark = pytest.mark.django_db

MAIN = "\\documentclass{article}\n\\begin{document}\n\\input{sections/intro}\n\\end{document}\n"
INTRO = "\\section{Introduction}\nHello.\n"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def zipped(*members, stored: bool = False) -> bytes:
    """A zip of ``(name, data)`` members (data ``None``: a folder entry) or ready ``ZipInfo``s with data."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            if isinstance(name, zipfile.ZipInfo):
                archive.writestr(name, data)
            elif data is None:
                archive.writestr(zipfile.ZipInfo(name if name.endswith("/") else name + "/"), b"")
            else:
                archive.writestr(name, data)
    return buffer.getvalue()


def special(name: str, mode: int, data: bytes = b"target") -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info, data


def unpack(client, project, data: bytes, **params):
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return client.post(
        f"/v1/projects/{project.pk}/archive{'?' + query if query else ''}", data, content_type="application/zip"
    )


def create(client, data: bytes, name: str = "From a zip"):
    return client.post(f"/v1/projects/archive?name={name}", data, content_type="application/zip")


def fingerprint(project) -> tuple:
    fresh = Project.objects.get(pk=project.pk)
    files = sorted(ProjectFile.objects.filter(project=project).values_list("path", "sha256"))
    folders = sorted(ProjectFolder.objects.filter(project=project).values_list("path", flat=True))
    return fresh.generation, fresh.file_count, fresh.total_bytes, files, folders


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response.json()["error"]["code"] == code
    return response.json()["error"]


@pytest.fixture
def bare(owner):
    return ProjectFactory(owner=owner)


def test_a_zip_is_unpacked_into_the_folder_it_was_dropped_on_in_one_change(owner_client, project):
    generation = Project.objects.get(pk=project.pk).generation
    latin1 = "\\section{Ärger}\nÜber Öl.\n".encode("latin-1")
    data = zipped(
        ("main.tex", MAIN), ("sections/intro.tex", INTRO), ("sections/old.tex", latin1), ("figures/", None),
        ("figures/plot.png", PNG), ("empty/", None), ("__MACOSX/._main.tex", b"junk"), (".DS_Store", b"junk"),
    )  # fmt: skip

    response = unpack(owner_client, project, data, into="paper")

    assert response.status_code == 200, response.content
    body = response.json()
    assert sorted(body["created"]) == [
        "paper/figures/plot.png", "paper/main.tex", "paper/sections/intro.tex", "paper/sections/old.tex",
    ]  # fmt: skip
    assert body["replaced"] == []
    assert set(body["folders"]) >= {"paper", "paper/empty", "paper/figures", "paper/sections"}
    assert body["legacy_encoded"] == [{"path": "paper/sections/old.tex", "encoding": "cp1252", "label": "Windows-1252"}]
    assert body["skipped"] == ["__MACOSX/._main.tex", ".DS_Store"]
    assert owner_client.get(f"/v1/projects/{project.pk}/files/paper/sections/old.tex").content == latin1
    assert owner_client.get(f"/v1/projects/{project.pk}/files/paper/figures/plot.png").content == PNG
    assert Project.objects.get(pk=project.pk).generation == generation + 1
    assert ProjectFolder.objects.filter(project=project, path="paper/empty").exists()


@pytest.mark.parametrize(
    ("member", "rule"),
    [
        (("../escape.tex", b"x"), "segment"),
        (("a/../../escape.tex", b"x"), "segment"),
        (("/etc/passwd", b"x"), "absolute"),
        (("dir\\file.tex", b"x"), "backslash"),
        (("evil\u202etxt.tex", b"x"), "invisible_character"),
        (special("link.tex", stat.S_IFLNK | 0o777, b"/etc/passwd"), "not_a_file"),
        (special("device", stat.S_IFCHR | 0o600), "not_a_file"),
        (special("pipe", stat.S_IFIFO | 0o600), "not_a_file"),
    ],
)
def test_a_member_that_breaks_a_rule_is_refused_by_name_and_nothing_is_written(owner_client, project, member, rule):
    before = fingerprint(project)
    data = zipped(("fine.tex", b"fine"), member)

    error = refused(unpack(owner_client, project, data), 400, "archive_member_invalid")

    assert error["details"]["rule"] == rule
    assert error["details"]["member"] == (
        member[0].orig_filename if isinstance(member[0], zipfile.ZipInfo) else member[0]
    )
    assert fingerprint(project) == before


def test_a_member_whose_name_holds_a_nul_is_refused(owner_client, project):
    before = fingerprint(project)
    data = zipped(("fine.tex", b"fine"), ("nulXname.tex", b"x")).replace(b"nulXname.tex", b"nul\x00name.tex")

    error = refused(unpack(owner_client, project, data), 400, "archive_member_invalid")

    assert (error["details"]["member"], error["details"]["rule"]) == ("nul\\0name.tex", "nul")
    assert fingerprint(project) == before


@pytest.mark.parametrize(
    "members",
    [
        [("a.tex", b"1"), ("a.tex", b"2")],
        [("Figures/a.png", b"1"), ("figures/b.png", b"2")],
        [("Main.tex", b"1"), ("main.tex", b"2")],
        [("x", b"a file"), ("x/y.tex", b"and a folder")],
    ],
)
def test_members_that_clash_with_each_other_are_refused(owner_client, bare, members):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name it is asked to write
        data = zipped(*members)

    refused(unpack(owner_client, bare, data), 400, "archive_member_invalid")
    assert fingerprint(bare) == (0, 0, 0, [], [])


def test_files_that_exist_are_listed_and_replaced_only_when_asked(owner_client, project):
    before = fingerprint(project)
    data = zipped(("main.tex", "\\documentclass{article}\\begin{document}Zip\\end{document}\n"), ("new.bib", "@a{b}"))

    error = refused(unpack(owner_client, project, data), 409, "archive_conflicts")

    assert error["details"]["paths"] == ["main.tex"]
    assert fingerprint(project) == before
    response = unpack(owner_client, project, data, overwrite="true")
    assert response.status_code == 200, response.content
    assert (response.json()["created"], response.json()["replaced"]) == (["new.bib"], ["main.tex"])
    served = owner_client.get(f"/v1/projects/{project.pk}/files/main.tex").content.decode()
    assert served == "\\documentclass{article}\\begin{document}Zip\\end{document}\n"
    # The text document took the zip's text as an edit of its live document (editors receive it).
    main_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    assert AcceptedUpdate.objects.filter(log__file_id=main_id, origin=UpdateOrigin.SERVER).exists()


def test_something_that_is_not_a_zip_is_refused(owner_client, bare):
    refused(unpack(owner_client, bare, b"PK\x03\x04 but nothing after"), 400, "archive_invalid")
    refused(unpack(owner_client, bare, b"%PDF-1.7"), 400, "archive_invalid")


def test_a_form_or_another_type_is_415(owner_client, bare):
    response = owner_client.post(f"/v1/projects/{bare.pk}/archive", zipped(("a.tex", b"a")), content_type="text/plain")
    assert response.status_code == 415


def test_a_zip_bomb_is_refused_from_its_directory_before_anything_is_inflated(owner_client, bare, settings):
    settings.WORKSPACE_MAX_PROJECT_BYTES = 16 * 1024 * 1024
    bomb = zipped(("zeros.bin", bytes(20 * 1024 * 1024)))

    error = refused(unpack(owner_client, bare, bomb), 413, "archive_too_large")

    assert error["details"]["limit"] == "expanded_bytes"
    assert fingerprint(bare) == (0, 0, 0, [], [])


def test_an_archive_that_expands_too_many_times_its_size_is_refused(owner_client, bare):
    data = zipped(("zeros.bin", bytes(12 * 1024 * 1024)))  # some 12 kB that expand a thousandfold

    assert refused(unpack(owner_client, bare, data), 413, "archive_too_large")["details"]["limit"] == "ratio"


def test_a_member_that_inflates_past_the_size_it_declares_is_refused_as_damaged(owner_client, bare):
    data = bytearray(zipped(("liar.bin", bytes(100_000))))
    directory = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, directory + 24, 1000)  # the central directory's "uncompressed size"

    error = refused(unpack(owner_client, bare, bytes(data)), 400, "archive_member_invalid")

    assert error["details"]["rule"] == "corrupt"
    assert fingerprint(bare) == (0, 0, 0, [], [])


@pytest.mark.parametrize(
    ("setting", "value", "limit"),
    [("WORKSPACE_MAX_FILES", 4, "members"), ("WORKSPACE_MAX_ARCHIVE_BYTES", 2000, "archive_bytes")],
)
def test_archives_over_a_limit_are_413(owner_client, bare, settings, setting, value, limit):
    setattr(settings, setting, value)
    data = zipped(*[(f"file{number}.txt", bytes(range(200)) * 2) for number in range(10)], stored=True)

    error = refused(unpack(owner_client, bare, data), 413, "archive_too_large")

    assert error["details"]["limit"] == limit


def test_a_member_over_the_file_limit_is_413_and_nothing_is_written(owner_client, bare, settings):
    settings.WORKSPACE_MAX_TEXT_BYTES = 100
    refused(unpack(owner_client, bare, zipped(("ok.tex", b"ok"), ("big.tex", b"x" * 500))), 413, "file_too_large")
    assert fingerprint(bare) == (0, 0, 0, [], [])


def test_who_may_unpack_and_download(owner, owner_client, project, api_client_for):
    viewer, stranger = UserFactory(), UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=viewer.username, role="viewer")
    data = zipped(("extra.tex", b"x"))

    refused(unpack(api_client_for(viewer), project, data), 403, "forbidden")
    assert api_client_for(viewer).get(f"/v1/projects/{project.pk}/archive").status_code == 200
    refused(unpack(api_client_for(stranger), project, data), 404, "project_not_found")
    refused(api_client_for(stranger).get(f"/v1/projects/{project.pk}/archive"), 404, "project_not_found")
    member_remove(actor_id=owner.pk, project_id=project.pk, username=viewer.username)
    refused(api_client_for(viewer).get(f"/v1/projects/{project.pk}/archive"), 404, "project_not_found")


def download(client, project) -> tuple[object, zipfile.ZipFile]:
    response = client.get(f"/v1/projects/{project.pk}/archive")
    assert response.status_code == 200, response.content
    return response, zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def test_the_download_is_the_projects_files_exactly_with_its_folders(owner_client, bare):
    unpack(owner_client, bare, zipped(("main.tex", MAIN), ("sections/intro.tex", INTRO), ("figures/plot.png", PNG)))
    owner_client.post(f"/v1/projects/{bare.pk}/folders", {"path": "drafts/empty"}, format="json")
    Project.objects.filter(pk=bare.pk).update(name="Paper: “final”")

    response, archive = download(owner_client, bare)

    assert response["Content-Type"] == "application/zip"
    assert "Paper" in response["Content-Disposition"] and ".zip" in response["Content-Disposition"]
    assert archive.testzip() is None
    assert {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")} == {
        "main.tex": MAIN.encode(),
        "sections/intro.tex": INTRO.encode(),
        "figures/plot.png": PNG,
    }
    assert {name for name in archive.namelist() if name.endswith("/")} == {
        "drafts/", "drafts/empty/", "figures/", "sections/",
    }  # fmt: skip


def test_the_download_holds_every_stored_edit(owner, owner_client, project):
    from collaboration.services import text_edit

    text_edit(actor_id=owner.pk, project_id=project.pk, path="main.tex", text="% typed live\n")

    _, archive = download(owner_client, project)

    assert archive.read("main.tex") == b"% typed live\n"


def test_a_new_project_is_made_from_a_zip_of_one_folder_with_its_main_file_found(owner_client, owner):
    data = zipped(
        ("paper/", None), ("paper/sections/intro.tex", INTRO), ("paper/main.tex", MAIN),
        ("paper/figures/plot.png", PNG), ("paper/appendix.tex", "\\section{More}"),
    )  # fmt: skip

    response = create(owner_client, data, name="Uploaded paper")

    assert response.status_code == 201, response.content
    project = response.json()["project"]
    assert (project["name"], project["type"], project["entry_path"], project["compiler"]) == (
        "Uploaded paper", "latex", "main.tex", "pdflatex",
    )  # fmt: skip
    assert sorted(file["path"] for file in response.json()["files"]) == [
        "appendix.tex", "figures/plot.png", "main.tex", "sections/intro.tex",
    ]  # fmt: skip
    assert owner_client.get(f"/v1/projects/{project['id']}/files/figures/plot.png").content == PNG


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        ([("report.typ", "= Hello"), ("lib/util.typ", "#let x = 1")], ("typst", "report.typ", None)),
        (
            [("a/x.tex", "\\documentclass{book}"), ("thesis.tex", "\\documentclass{report}")],
            ("latex", "thesis.tex", "pdflatex"),
        ),
        ([("paper.tex", "\\documentclass{article}\n\\usepackage{fontspec}")], ("latex", "paper.tex", "xelatex")),
        (
            [("notes.tex", "% \\documentclass{x}\n\\section{Not a main}"), ("main.typ", "= T")],
            ("typst", "main.typ", None),
        ),
    ],
)
def test_the_main_file_and_type_are_detected(owner_client, members, expected):
    project = create(owner_client, zipped(*members)).json()["project"]

    assert (project["type"], project["entry_path"], project["compiler"]) == expected


def test_a_zip_without_a_main_file_makes_no_project(owner_client, owner):
    error = refused(create(owner_client, zipped(("readme.txt", "nothing to build"))), 400, "archive_invalid")

    assert error["details"]["reason"] == "no_main_file"
    assert not Project.objects.exists()


def test_a_download_unpacked_as_a_new_project_gives_the_same_files(owner_client, bare):
    unpack(owner_client, bare, zipped(("main.tex", MAIN), ("sections/intro.tex", INTRO), ("figures/plot.png", PNG)))
    _, archive = download(owner_client, bare)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as copy:
        for info in archive.infolist():  # as another tool would write it again
            copy.writestr(zipfile.ZipInfo(info.filename, info.date_time), archive.read(info))

    again = create(owner_client, buffer.getvalue()).json()["project"]

    _, second = download(owner_client, Project.objects.get(pk=again["id"]))
    assert {name: second.read(name) for name in second.namelist()} == {
        name: archive.read(name) for name in archive.namelist()
    }
