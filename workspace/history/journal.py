"""The journal: a trigger on the file table (``workspace_file_journal``, installed by migration 0008) writes one
``FileChange`` per write to a file row, in the writing transaction, so every way of changing a file (an editor's
projection, an upload, a zip, a folder moved with everything in it, a project deleted) is history without each
writer remembering to say so.

The trigger cannot know who is writing or why: a writer says so first, for its transaction only, with
``actors_note`` (who) and, for a restore, ``restore_note`` (which version is being restored).
"""

from django.db import connection


def actors_note(actor_ids) -> None:
    """Inside the writing transaction: the files written from now on are written by these users."""
    ids = sorted({int(actor) for actor in actor_ids if actor is not None})
    _setting_set("quire.actors", "{" + ",".join(map(str, ids)) + "}")


def restore_note(number: int | None) -> None:
    """Inside the writing transaction: the files written from now on restore version ``number`` (None: stop)."""
    _setting_set("quire.restore_of", "" if number is None else str(number))


def _setting_set(name: str, value: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
