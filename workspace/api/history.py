"""A project's history over HTTP: versions, a file as a version left it, diffs, restores and labels.

Every route answers 404 for a project the caller cannot see; reading needs the view permission, restoring and
labelling the edit permission.
"""

import mimetypes
import uuid

from django.http import HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from access import facade as access
from foundation.errors import QuireError
from foundation.http.openapi import ERROR_RESPONSES, error
from workspace import selectors
from workspace.history import downloads, labels, reading, restoring
from workspace.history.models import Version
from workspace.models import FileKind

MAX_PATHS = 10_000


class InvalidHistoryQuery(QuireError):
    """That query does not name versions, authors or paths this route knows."""

    code = "invalid_query"
    status_code = 400


def version_json(version: Version, usernames: dict[int, str]) -> dict:
    return {
        "id": version.number,
        "kind": version.kind,
        "restored_from": version.restored_from,
        "started_at": version.started_at,
        "ended_at": version.ended_at,
        "authors": [usernames.get(author, f"user {author}") for author in version.authors],
        "colours": {
            usernames.get(author, f"user {author}"): access.user_colour(user_id=author) for author in version.authors
        },
        "labels": [label.name for label in version.labels.all()],
        "changes": [
            {
                "path": change.path,
                "kind": reading.change_kind(version, change),
                "old_path": change.old_path,
                "file_kind": change.file_kind,
                "added": change.added,
                "removed": change.removed,
            }
            for change in version.changes.all()
        ],
    }


def versions_json(versions: list[Version]) -> list[dict]:
    usernames = access.usernames_of(user_ids={author for version in versions for author in version.authors})
    return [version_json(version, usernames) for version in versions]


def _number(value: str | None, name: str) -> int | None:
    if value in (None, ""):
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 18:
        raise InvalidHistoryQuery(f"`{name}` is a version number.", details={"field": name})
    return int(value)


def _paths_valid(paths) -> bool:
    return isinstance(paths, list) and len(paths) <= MAX_PATHS and all(isinstance(path, str) for path in paths)


def _author_id(username: str | None) -> int | None:
    if not username:
        return None
    found = access.user_id_named(username=username)
    return -1 if found is None else found  # nobody by that name wrote anything: an empty page, not an error


VERSION_SCHEMA = inline_serializer(
    name="HistoryVersion",
    fields={
        "id": serializers.IntegerField(),
        "kind": serializers.ChoiceField(choices=["edit", "restore"]),
        "restored_from": serializers.IntegerField(allow_null=True),
        "started_at": serializers.DateTimeField(),
        "ended_at": serializers.DateTimeField(),
        "authors": serializers.ListField(child=serializers.CharField()),
        "colours": serializers.DictField(child=serializers.CharField()),
        "labels": serializers.ListField(child=serializers.CharField()),
        "changes": serializers.ListField(child=serializers.DictField()),
    },
)


class HistoryListApi(APIView):
    @extend_schema(
        operation_id="project_history_list",
        parameters=[
            OpenApiParameter("path", OpenApiTypes.STR, required=False, description="Only versions touching it."),
            OpenApiParameter("author", OpenApiTypes.STR, required=False, description="Only versions by this user."),
            OpenApiParameter("before", OpenApiTypes.INT, required=False, description="The `next` of a page."),
        ],
        responses={
            200: inline_serializer(
                name="HistoryPage",
                fields={
                    "versions": serializers.ListField(child=VERSION_SCHEMA),
                    "next": serializers.IntegerField(allow_null=True),
                },
            ),
            **ERROR_RESPONSES,
        },
        description="The project's versions, newest first (50 a page): each a run of changes with no pause longer "
        "than the history gap, a restore, or the changes before a label. Each change names its file, its kind "
        "(edit, create, delete, move, restore) and the lines it added and removed.",
        tags=["history"],
    )
    def get(self, request, project_id: uuid.UUID):
        selectors.project_for(user_id=request.user.pk, project_id=project_id)
        params = request.query_params
        versions, following = reading.versions_page(
            project_id=project_id,
            path=params.get("path") or None,
            author_id=_author_id(params.get("author")),
            before=_number(params.get("before"), "before"),
        )
        return Response({"versions": versions_json(versions), "next": following})


class HistoryFileApi(APIView):
    @extend_schema(
        operation_id="project_history_file",
        responses={(200, "*/*"): OpenApiTypes.BINARY, **ERROR_RESPONSES},
        description="The file at that path as the version left it: text as UTF-8 text/plain, assets as bytes.",
        tags=["history"],
    )
    def get(self, request, project_id: uuid.UUID, version: int, path: str):
        selectors.project_for(user_id=request.user.pk, project_id=project_id)
        state, data = reading.file_at(project_id=project_id, number=version, path=path)
        text = state.file_kind == FileKind.TEXT
        content_type = "text/plain; charset=utf-8" if text else mimetypes.guess_type(state.path)[0]
        response = HttpResponse(data, content_type=content_type or "application/octet-stream")
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "sandbox; default-src 'none'"
        response["Content-Disposition"] = content_disposition_header(not text, state.path.rsplit("/", 1)[-1])
        return response


class HistoryDiffApi(APIView):
    @extend_schema(
        operation_id="project_history_diff",
        parameters=[
            OpenApiParameter("against", OpenApiTypes.STR, required=False, description="A version or `current`."),
            OpenApiParameter("path", OpenApiTypes.STR, required=False, description="Only this file."),
        ],
        responses={(200, "text/x-diff"): OpenApiTypes.STR, **ERROR_RESPONSES},
        description="The changes from the earlier of the two to the later, as a unified diff (`git diff`'s form: "
        "renames named, binary files said to differ). With `Accept: application/json`: the files that differ, "
        "each with its kind and counts, its texts and, per line of the later text, who wrote it.",
        tags=["history"],
    )
    def get(self, request, project_id: uuid.UUID, version: int):
        selectors.project_for(user_id=request.user.pk, project_id=project_id)
        against_text = request.query_params.get("against") or "current"
        against = None if against_text == "current" else _number(against_text, "against")
        diffs, first, second = reading.diff_between(
            project_id=project_id, number=version, against=against, path=request.query_params.get("path") or None
        )
        if "application/json" in request.headers.get("Accept", ""):
            return Response({"from": first, "to": second, "files": _files_json(project_id, diffs, first, second)})
        return HttpResponse(reading.unified_diff(diffs), content_type="text/x-diff; charset=utf-8")


def _files_json(project_id: uuid.UUID, diffs: list[reading.FileDiff], first: int, second: int | None) -> list[dict]:
    files, authors_seen = [], set()
    for diff in diffs:
        text = diff.file_kind == FileKind.TEXT
        line_authors = []
        if text and diff.new is not None:
            line_authors = reading.line_authors(
                project_id=project_id, file_id=diff.new.file_id, first=first, second=second
            )
            authors_seen |= {author for line in line_authors for author in line}
        added, removed = diff.lines_changed()
        files.append(
            {
                "path": diff.path,
                "old_path": diff.old_path,
                "kind": diff.kind,
                "file_kind": diff.file_kind,
                "added": added,
                "removed": removed,
                "old_text": reading.text_of(diff.old.sha256) if text and diff.old else None,
                "new_text": reading.text_of(diff.new.sha256) if text and diff.new else None,
                "line_authors": line_authors,
            }
        )
    usernames = access.usernames_of(user_ids=authors_seen)
    for file in files:
        file["line_authors"] = [[usernames.get(author, "") for author in line] for line in file["line_authors"]]
    colours = {name: access.user_colour(user_id=user_id) for user_id, name in usernames.items()}
    return [{**file, "colours": colours} for file in files]


class HistoryArchiveApi(APIView):
    @extend_schema(
        operation_id="project_history_archive",
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **ERROR_RESPONSES},
        description="The project's files as the version left them, as a zip named after its label.",
        tags=["history"],
    )
    def get(self, request, project_id: uuid.UUID, version: int):
        archive = downloads.version_archive(user_id=request.user.pk, project_id=project_id, number=version)
        response = StreamingHttpResponse(archive.chunks, content_type="application/zip")
        response["Content-Disposition"] = content_disposition_header(True, f"{archive.name}.zip")
        response["Cache-Control"] = "private, no-store"
        return response


class HistoryRestoreApi(APIView):
    @extend_schema(
        operation_id="project_history_restore",
        request=inline_serializer(
            name="HistoryRestore",
            fields={"paths": serializers.ListField(child=serializers.CharField(), required=False)},
        ),
        responses={
            200: inline_serializer(name="HistoryRestored", fields={"version": VERSION_SCHEMA}),
            **ERROR_RESPONSES,
            409: error("`restore_conflict`: a file left out of the restore holds a path a restored file needs."),
        },
        description="Make the files named (as they were at the version, or are now; all files when `paths` is "
        "left out) what the version left them: a new version by you, which editors receive live. `version` is "
        "null when nothing differed.",
        tags=["history"],
    )
    def post(self, request, project_id: uuid.UUID, version: int):
        body = request.data
        paths = body.get("paths") if isinstance(body, dict) else None
        if not isinstance(body, dict) or ("paths" in body and not _paths_valid(paths)):
            raise InvalidHistoryQuery("Send `paths`, a list of file paths, or nothing for every file.")
        restored = restoring.history_restore(
            actor_id=request.user.pk, project_id=project_id, number=version, paths=paths
        )
        if restored is None:
            return Response({"version": None})
        restored = Version.objects.prefetch_related("changes", "labels").get(pk=restored.pk)
        return Response({"version": versions_json([restored])[0]})


LABEL_SCHEMA = inline_serializer(
    name="HistoryLabel",
    fields={
        "name": serializers.CharField(),
        "version": serializers.IntegerField(),
        "created_by": serializers.CharField(),
        "created_at": serializers.DateTimeField(),
    },
)


class LabelListApi(APIView):
    @extend_schema(
        operation_id="project_labels_list",
        responses={
            200: inline_serializer(name="HistoryLabels", fields={"labels": serializers.ListField(child=LABEL_SCHEMA)}),
            **ERROR_RESPONSES,
        },
        tags=["history"],
    )
    def get(self, request, project_id: uuid.UUID):
        selectors.project_for(user_id=request.user.pk, project_id=project_id)
        found = labels.labels_of(project_id=project_id)
        usernames = access.usernames_of(user_ids={label.created_by_id for label in found})
        return Response(
            {
                "labels": [
                    {
                        "name": label.name,
                        "version": label.version.number,
                        "created_by": usernames.get(label.created_by_id, ""),
                        "created_at": label.created_at,
                    }
                    for label in found
                ]
            }
        )

    @extend_schema(
        operation_id="project_labels_create",
        request=inline_serializer(name="HistoryLabelCreate", fields={"name": serializers.CharField()}),
        responses={
            201: inline_serializer(
                name="HistoryLabelMade", fields={"name": serializers.CharField(), "version": serializers.IntegerField()}
            ),
            **ERROR_RESPONSES,
            409: error("`label_exists`: the project has a label with that name."),
        },
        description="Name the project's files as they are now: the version in progress ends here.",
        tags=["history"],
    )
    def post(self, request, project_id: uuid.UUID):
        name = request.data.get("name") if isinstance(request.data, dict) else None
        if not isinstance(name, str):
            raise InvalidHistoryQuery("`name` is the label's name.", details={"field": "name"})
        label = labels.label_create(actor_id=request.user.pk, project_id=project_id, name=name)
        return Response({"name": label.name, "version": label.version.number}, status=status.HTTP_201_CREATED)
