"""Comments: threads anchored in a document's text (``collaboration/anchors.py``), with replies.

Every member may comment, viewers too (a reviewer is often one); a comment's author edits it; its author or an
owner deletes it (the thread goes with its last comment, and a whole thread is deleted by an owner or by whoever
wrote all of it); any member resolves and reopens a thread. Comments
live beside the text, never in it, so no build sees them. Every change is told at once to the project's open
pages (``{"type": "comments"}``), which ask again.
"""

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from access import facade as access
from collaboration import signals
from collaboration.anchors import Anchor, anchor_make, anchors_resolve
from collaboration.exceptions import CommentNotFound, InvalidComment, InvalidRange
from collaboration.log import document_read_latest, documents
from collaboration.models import Comment, CommentThread
from collaboration.services.opened import document_open
from collaboration.ydoc import doc_text
from workspace import facade as workspace

MAX_COMMENT_CHARS = 10_000
QUOTE_CHARS = 500
COMMENTS = "comments"


@dataclass(frozen=True)
class ThreadRead:
    thread: CommentThread
    comments: list[Comment]
    path: str
    file_exists: bool
    position: tuple[int, int] | None  # None: its text (or its file) is deleted


def thread_start(*, actor_id: int, project_id: uuid.UUID, path: str, start, end, text) -> CommentThread:
    """Comment on characters ``start``..``end`` (code points of the current text) of the document at ``path``."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    text = _comment_text(text)
    file_id = workspace.document_read(project_id=project_id, path=path).file_id
    with transaction.atomic(durable=True):
        opened = document_open(project_id=project_id, file_id=file_id)
        opened.store()  # a due reconciliation first: the anchor must name characters the log holds
        if opened.stored() is not None:
            signals.update_stored_send(project_id=project_id, file_id=file_id, batch=opened.batch([]))
        content = doc_text(opened.doc)
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(content)):
            raise InvalidRange(details={"length": len(content)})
        anchor = anchor_make(opened.doc, start, end)
        thread = CommentThread.objects.create(
            project_id=project_id,
            file_id=file_id,
            path=opened.document.path,
            anchor_start=anchor.start,
            anchor_end=anchor.end,
            quote=content[start:end][:QUOTE_CHARS],
            created_by_id=actor_id,
        )
        Comment.objects.create(thread=thread, author_id=actor_id, text=text)
        _told_after_commit(project_id)
    opened.keep()
    return thread


def reply_add(*, actor_id: int, project_id: uuid.UUID, thread_id: uuid.UUID, text) -> Comment:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    text = _comment_text(text)
    with transaction.atomic():
        thread = _thread_locked(project_id, thread_id)
        comment = Comment.objects.create(thread=thread, author_id=actor_id, text=text)
        _told_after_commit(project_id)
    return comment


def reply_edit(*, actor_id: int, project_id: uuid.UUID, thread_id: uuid.UUID, reply_id: uuid.UUID, text) -> Comment:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    text = _comment_text(text)
    with transaction.atomic():
        comment = _comment_locked(project_id, thread_id, reply_id)
        if comment.author_id != actor_id:
            raise access.ActionForbidden("Only its author may edit a comment.")
        comment.text, comment.edited_at = text, timezone.now()
        comment.save(update_fields=["text", "edited_at"])
        _told_after_commit(project_id)
    return comment


def reply_delete(*, actor_id: int, project_id: uuid.UUID, thread_id: uuid.UUID, reply_id: uuid.UUID) -> None:
    """Delete one comment (its author or an owner); the thread goes with its last one."""
    role = access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    with transaction.atomic():
        comment = _comment_locked(project_id, thread_id, reply_id)
        if comment.author_id != actor_id and role != access.Role.OWNER:
            raise access.ActionForbidden("Only its author or an owner may delete a comment.")
        comment.delete()
        if not Comment.objects.filter(thread_id=thread_id).exists():
            CommentThread.objects.filter(pk=thread_id).delete()
        _told_after_commit(project_id)


def thread_delete(*, actor_id: int, project_id: uuid.UUID, thread_id: uuid.UUID) -> None:
    """Delete a whole thread: an owner, or whoever wrote every comment of it (no one deletes others' words)."""
    role = access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    with transaction.atomic():
        thread = _thread_locked(project_id, thread_id)
        others = Comment.objects.filter(thread=thread).exclude(author_id=actor_id).exists()
        if others and role != access.Role.OWNER:
            raise access.ActionForbidden("Only an owner may delete a thread with others' comments in it.")
        thread.delete()
        _told_after_commit(project_id)


def thread_resolve(*, actor_id: int, project_id: uuid.UUID, thread_id: uuid.UUID, resolved) -> CommentThread:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    if not isinstance(resolved, bool):
        raise InvalidComment("`resolved` is true or false.", details={"field": "resolved"})
    with transaction.atomic():
        thread = _thread_locked(project_id, thread_id)
        if resolved != (thread.resolved_at is not None):
            thread.resolved_at, thread.resolved_by_id = (timezone.now(), actor_id) if resolved else (None, None)
            thread.save(update_fields=["resolved_at", "resolved_by_id"])
            _told_after_commit(project_id)
    return thread


def threads_read(*, actor_id: int, project_id: uuid.UUID, path: str | None = None) -> list[ThreadRead]:
    """The project's threads (or one document's), oldest first, each where its anchors are now."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    threads = CommentThread.objects.filter(project_id=project_id).order_by("created_at", "pk")
    if path is not None:
        threads = threads.filter(file_id=workspace.document_read(project_id=project_id, path=path).file_id)
    threads = list(threads.prefetch_related("comments"))
    paths = workspace.document_paths_of(project_id=project_id, file_ids={thread.file_id for thread in threads})
    positions: dict[uuid.UUID, tuple[int, int] | None] = {}
    for file_id in {thread.file_id for thread in threads if thread.file_id in paths}:
        of_file = [thread for thread in threads if thread.file_id == file_id]
        log, doc = document_read_latest(file_id)
        anchors = [Anchor(bytes(thread.anchor_start), bytes(thread.anchor_end)) for thread in of_file]
        resolved = anchors_resolve(doc, anchors)
        if log is not None:
            documents.put(file_id, log.last_seq, doc)
        positions.update({thread.pk: where for thread, where in zip(of_file, resolved, strict=True)})
    return [
        ThreadRead(
            thread,
            sorted(thread.comments.all(), key=lambda comment: (comment.created_at, comment.pk)),
            paths.get(thread.file_id, thread.path),
            thread.file_id in paths,
            positions.get(thread.pk),
        )
        for thread in threads
    ]


def _comment_text(text) -> str:
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_COMMENT_CHARS:
        raise InvalidComment(details={"limit": MAX_COMMENT_CHARS})
    return text


def _thread_locked(project_id: uuid.UUID, thread_id: uuid.UUID) -> CommentThread:
    thread = CommentThread.objects.select_for_update().filter(project_id=project_id, pk=thread_id).first()
    if thread is None:
        raise CommentNotFound(details={"thread": str(thread_id)})
    return thread


def _comment_locked(project_id: uuid.UUID, thread_id: uuid.UUID, reply_id: uuid.UUID) -> Comment:
    _thread_locked(project_id, thread_id)
    comment = Comment.objects.filter(thread_id=thread_id, pk=reply_id).first()
    if comment is None:
        raise CommentNotFound(details={"reply": str(reply_id)})
    return comment


def _told_after_commit(project_id: uuid.UUID) -> None:
    signals.project_changed_on_commit(project_id=project_id, what=COMMENTS)
