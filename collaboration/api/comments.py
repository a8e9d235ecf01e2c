"""Comments over HTTP: threads anchored in a document's text, their replies, resolving and reopening.

``from``/``to`` are character offsets (Unicode code points) in the document's current text; a thread's are
resolved from its anchors when it is read, ``null`` once its text is deleted. Every member may comment.
"""

import base64
import uuid

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from access import facade as access
from collaboration.services import comments
from foundation.http.openapi import ERROR_RESPONSES


def _body(request) -> dict:
    return request.data if isinstance(request.data, dict) else {}


def _comment_json(comment, usernames: dict[int, str]) -> dict:
    return {
        "id": comment.id,
        "author": usernames.get(comment.author_id, ""),
        "colour": access.user_colour(user_id=comment.author_id),
        "text": comment.text,
        "created_at": comment.created_at,
        "edited_at": comment.edited_at,
    }


def threads_json(read: list[comments.ThreadRead]) -> list[dict]:
    users = {item.thread.created_by_id for item in read} | {item.thread.resolved_by_id for item in read}
    users |= {comment.author_id for item in read for comment in item.comments}
    usernames = access.usernames_of(user_ids=users)
    return [
        {
            "id": item.thread.id,
            "path": item.path,
            "file_exists": item.file_exists,
            "from": item.position[0] if item.position else None,
            "to": item.position[1] if item.position else None,
            "quote": item.thread.quote,
            "anchor": {
                "start": base64.b64encode(bytes(item.thread.anchor_start)).decode(),
                "end": base64.b64encode(bytes(item.thread.anchor_end)).decode(),
            },
            "resolved": item.thread.resolved_at is not None,
            "resolved_by": usernames.get(item.thread.resolved_by_id) if item.thread.resolved_by_id else None,
            "resolved_at": item.thread.resolved_at,
            "created_by": usernames.get(item.thread.created_by_id, ""),
            "created_at": item.thread.created_at,
            "comments": [_comment_json(comment, usernames) for comment in item.comments],
        }
        for item in read
    ]


def _one_thread(request, project_id: uuid.UUID, thread_id: uuid.UUID) -> dict:
    read = comments.threads_read(actor_id=request.user.pk, project_id=project_id)
    return next(item for item in threads_json(read) if item["id"] == thread_id)


THREAD = inline_serializer(
    name="CommentThread",
    fields={
        "id": serializers.UUIDField(),
        "path": serializers.CharField(),
        "file_exists": serializers.BooleanField(),
        "from": serializers.IntegerField(allow_null=True),
        "to": serializers.IntegerField(allow_null=True),
        "quote": serializers.CharField(),
        "anchor": serializers.DictField(child=serializers.CharField()),
        "resolved": serializers.BooleanField(),
        "comments": serializers.ListField(child=serializers.DictField()),
    },
)


class CommentListApi(APIView):
    @extend_schema(
        operation_id="project_comments_list",
        parameters=[OpenApiParameter("path", str, required=False, description="Only this document's threads.")],
        responses={
            200: inline_serializer(name="CommentThreads", fields={"threads": serializers.ListField(child=THREAD)}),
            **ERROR_RESPONSES,
        },
        description="Every thread, oldest first, with its comments and where its text is now (`from`/`to`, null "
        "once the text is deleted; `anchor`: its Yjs relative positions, base64, for editors to follow it live).",
        tags=["comments"],
    )
    def get(self, request, project_id: uuid.UUID):
        path = request.query_params.get("path") or None
        read = comments.threads_read(actor_id=request.user.pk, project_id=project_id, path=path)
        return Response({"threads": threads_json(read)})

    @extend_schema(
        operation_id="project_comments_create",
        request=inline_serializer(
            name="CommentThreadCreate",
            fields={
                "path": serializers.CharField(),
                "from": serializers.IntegerField(),
                "to": serializers.IntegerField(),
                "text": serializers.CharField(),
            },
        ),
        responses={201: THREAD, **ERROR_RESPONSES},
        description="Comment on characters `from`..`to` of the document's current text (`invalid_range` outside "
        "it). Viewers may comment.",
        tags=["comments"],
    )
    def post(self, request, project_id: uuid.UUID):
        body = _body(request)
        path = body.get("path")
        if not isinstance(path, str):
            path = ""
        thread = comments.thread_start(
            actor_id=request.user.pk,
            project_id=project_id,
            path=path,
            start=body.get("from"),
            end=body.get("to"),
            text=body.get("text"),
        )
        return Response(_one_thread(request, project_id, thread.pk), status=status.HTTP_201_CREATED)


class CommentThreadApi(APIView):
    @extend_schema(
        operation_id="project_comments_resolve",
        request=inline_serializer(name="CommentResolve", fields={"resolved": serializers.BooleanField()}),
        responses={200: THREAD, **ERROR_RESPONSES},
        description="Resolve (`true`) or reopen (`false`) the thread; any member may.",
        tags=["comments"],
    )
    def patch(self, request, project_id: uuid.UUID, thread: uuid.UUID):
        comments.thread_resolve(
            actor_id=request.user.pk, project_id=project_id, thread_id=thread, resolved=_body(request).get("resolved")
        )
        return Response(_one_thread(request, project_id, thread))

    @extend_schema(
        operation_id="project_comments_destroy",
        responses={204: None, **ERROR_RESPONSES},
        description="Delete the whole thread: whoever began it, or an owner.",
        tags=["comments"],
    )
    def delete(self, request, project_id: uuid.UUID, thread: uuid.UUID):
        comments.thread_delete(actor_id=request.user.pk, project_id=project_id, thread_id=thread)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CommentReplyListApi(APIView):
    @extend_schema(
        operation_id="project_comments_reply",
        request=inline_serializer(name="CommentReplyCreate", fields={"text": serializers.CharField()}),
        responses={201: THREAD, **ERROR_RESPONSES},
        tags=["comments"],
    )
    def post(self, request, project_id: uuid.UUID, thread: uuid.UUID):
        comments.reply_add(
            actor_id=request.user.pk, project_id=project_id, thread_id=thread, text=_body(request).get("text")
        )
        return Response(_one_thread(request, project_id, thread), status=status.HTTP_201_CREATED)


class CommentReplyApi(APIView):
    @extend_schema(
        operation_id="project_comments_reply_edit",
        request=inline_serializer(name="CommentReplyEdit", fields={"text": serializers.CharField()}),
        responses={200: THREAD, **ERROR_RESPONSES},
        description="Edit your own comment.",
        tags=["comments"],
    )
    def patch(self, request, project_id: uuid.UUID, thread: uuid.UUID, reply: uuid.UUID):
        comments.reply_edit(
            actor_id=request.user.pk,
            project_id=project_id,
            thread_id=thread,
            reply_id=reply,
            text=_body(request).get("text"),
        )
        return Response(_one_thread(request, project_id, thread))

    @extend_schema(
        operation_id="project_comments_reply_destroy",
        responses={204: None, **ERROR_RESPONSES},
        description="Delete a comment: its author, or an owner. A thread goes with its last comment.",
        tags=["comments"],
    )
    def delete(self, request, project_id: uuid.UUID, thread: uuid.UUID, reply: uuid.UUID):
        comments.reply_delete(actor_id=request.user.pk, project_id=project_id, thread_id=thread, reply_id=reply)
        return Response(status=status.HTTP_204_NO_CONTENT)
