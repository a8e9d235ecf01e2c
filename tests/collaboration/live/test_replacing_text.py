"""Replacing a text document's whole text through the API (``PUT``) while editors have it open live.

The requests go to the live server itself, so that the process holding the editors' sockets is the one that
stores the replacement and relays it to them.
"""

import asyncio
import io
import zipfile

import pytest

from access.services import member_set
from tests.collaboration.live.helpers import (
    close_all,
    connect,
    covers,
    eventually,
    file_id_of,
    own_clock,
    run,
    stored_text,
    stored_vector,
    update_rows,
    workspace_row,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_put_with_a_stale_if_match_is_412_and_changes_nothing(server, owner, project):
    file_id = file_id_of(project)
    api, url = server.api(owner), server.file_url(project)

    async def scenario():
        alice = None
        try:
            first = await asyncio.to_thread(api.get, url, timeout=10)
            assert first.status_code == 200
            stale_etag = first.headers["ETag"]
            assert stale_etag == f'"{workspace_row(file_id).version}"'

            # The document moves on: another API write, then a live editor's keystrokes (projected).
            moved = await asyncio.to_thread(
                api.put,
                url,
                data=(first.text + "% by the API\n").encode(),
                headers={"If-Match": stale_etag},
                timeout=10,
            )
            assert moved.status_code == 200, moved.text
            alice = await connect(server, owner, project)
            alice.insert(0, "% live\n")
            await alice.wait_until(alice.saved)
            await eventually(lambda: api.get(url, timeout=10).text == alice.text, what="the projection")

            row, rows, text = workspace_row(file_id), update_rows(file_id), stored_text(file_id)
            stale = await asyncio.to_thread(
                api.put, url, data=b"a text based on an old version\n", headers={"If-Match": stale_etag}, timeout=10
            )
            assert stale.status_code == 412, stale.text
            error = stale.json()["error"]
            assert error["code"] == "version_mismatch"
            assert error["details"]["current_version"] == row.version
            assert stale.headers["ETag"] == f'"{row.version}"'

            after = workspace_row(file_id)
            assert (after.version, after.sha256) == (row.version, row.sha256)
            assert update_rows(file_id) == rows and stored_text(file_id) == text
            current = await asyncio.to_thread(api.get, url, timeout=10)
            assert current.text == text and current.headers["ETag"] == f'"{row.version}"'

            # With the current version the same request is taken, and the live editor receives it.
            fresh = await asyncio.to_thread(
                api.put,
                url,
                data=b"a text based on the current version\n",
                headers={"If-Match": current.headers["ETag"]},
            )
            assert fresh.status_code == 200, fresh.text
            assert fresh.headers["ETag"] == f'"{row.version + 1}"'
            await alice.wait_until(lambda: alice.text == "a text based on the current version\n")
        finally:
            await close_all(alice)

    run(scenario())


def test_a_put_reaches_live_editors_and_a_keystroke_made_meanwhile_survives(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    file_id = file_id_of(project)
    api, url = server.api(owner), server.file_url(project)

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, coauthor, project)
            bob = await connect(server, coauthor, project)
            base = alice.text
            assert "\\end{document}" in base
            replaced = base.replace("\\end{document}", "Written through the API.\n\\end{document}")

            # Alice types at the start; her keystroke is still on its way when the PUT is stored.
            alice.holding = True
            alice.insert(0, "% typed meanwhile\n")
            answer = await asyncio.to_thread(api.put, url, data=replaced.encode(), timeout=10)
            assert answer.status_code == 200, answer.text
            assert stored_text(file_id) == replaced
            await bob.wait_until(lambda: bob.text == replaced)
            await alice.wait_until(lambda: "Written through the API." in alice.text)
            assert alice.text == "% typed meanwhile\n" + replaced

            await alice.release()
            await alice.wait_until(alice.saved)
            await bob.wait_until(lambda: bob.text == alice.text)
            assert stored_text(file_id) == "% typed meanwhile\n" + replaced
            await eventually(lambda: api.get(url, timeout=10).text == alice.text, what="the projection")
        finally:
            await close_all(alice, bob)

    run(scenario())


def _zip_of(path: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(path, text)
    return buffer.getvalue()


def test_a_zip_overwriting_a_document_two_editors_type_in_loses_no_keystroke(server, owner, coauthor, project):
    """Both editors type while a zip that overwrites the document is unpacked: each keystroke is stored (so it is
    in the document's history), the zip's text arrives as an edit, and both editors converge on what is stored."""
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    file_id = file_id_of(project)
    api = server.api(owner)
    zipped_text = "\\documentclass{article}\n\\begin{document}\nFrom the zip.\n\\end{document}\n"
    archive_url = f"{server.url}/v1/projects/{project.pk}/archive?overwrite=true"

    async def typing(editor, mark: str, keys: int) -> None:
        for number in range(keys):
            editor.insert(len(editor.text) if number % 2 else 0, f"{mark}{number};")
            await asyncio.sleep(0.01)

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, owner, project)
            bob = await connect(server, coauthor, project)
            upload = asyncio.to_thread(
                api.post, archive_url, data=_zip_of("main.tex", zipped_text),
                headers={"Content-Type": "application/zip"}, timeout=20,
            )  # fmt: skip
            answer, _, _ = await asyncio.gather(upload, typing(alice, "a", 40), typing(bob, "b", 40))
            assert answer.status_code == 200, answer.text
            assert answer.json()["replaced"] == ["main.tex"]
            await typing(alice, "after-a", 2)
            await typing(bob, "after-b", 2)
            await alice.wait_until(alice.saved)
            await bob.wait_until(bob.saved)

            stored = await eventually(lambda: stored_vector(file_id), what="the log")
            assert covers(stored, {alice.doc.client_id: own_clock(alice), bob.doc.client_id: own_clock(bob)})
            await alice.wait_until(lambda: alice.text == bob.text == stored_text(file_id), timeout=20)
            assert "From the zip." in alice.text
            assert all(mark in alice.text for mark in ("after-a0;", "after-a1;", "after-b0;", "after-b1;"))
            await eventually(
                lambda: api.get(server.file_url(project), timeout=10).text == alice.text, what="projection"
            )
        finally:
            await close_all(alice, bob)

    run(scenario())
