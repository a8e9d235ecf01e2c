"""A project page's events socket: members hear at once that the tree, the output or their role changed, and a
removed member is closed at once. The server re-reads access only once a minute here, so every prompt answer
below comes from the change's own announcement, not from the periodic check."""

import asyncio
import json

import pytest
from websockets.asyncio.client import connect as websocket_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from access.services import member_set
from collaboration.live import protocol
from tests.collaboration.live.helpers import close_all, connect, run, served, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = 5.0  # seconds: far below the minute between periodic checks


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker, tmp_path_factory, channel_layer_of_tests):
    yield from served(django_db_blocker, tmp_path_factory, "project-events", {"COLLAB_ACCESS_CHECK_SECONDS": "60"})


class Page:
    """A project page's events socket, as the browser opens it."""

    def __init__(self, socket):
        self.socket = socket

    async def next(self, timeout: float = PROMPT) -> dict:
        return json.loads(await asyncio.wait_for(self.socket.recv(), timeout))

    async def expect(self, kind: str) -> dict:
        while True:
            message = await self.next()
            if message["type"] == kind:
                return message


async def page_of(server, user, project) -> Page:
    socket = await websocket_connect(
        f"ws://127.0.0.1:{server.port}/ws/projects/{project.pk}/events",
        additional_headers={"Cookie": f"sessionid={session_cookie(user)}"},
        origin=server.origin,
    )
    return Page(socket)


def test_a_member_is_greeted_with_their_role_and_a_stranger_is_refused(server, owner, coauthor, stranger, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="viewer")

    async def scenario():
        page = await page_of(server, coauthor, project)
        assert await page.next() == {"type": "hello", "role": "viewer"}
        await page.socket.send("ping")
        assert await page.next() == {"type": "pong"}
        await page.socket.close()
        with pytest.raises(InvalidStatus) as refused:
            await page_of(server, stranger, project)
        assert refused.value.response.status_code == 403

    run(scenario())


def test_every_member_hears_of_a_new_folder_at_once(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="viewer")
    api = server.api(owner)

    async def scenario():
        page = await page_of(server, coauthor, project)
        await page.expect("hello")
        answer = await asyncio.to_thread(
            api.post, f"{server.url}/v1/projects/{project.pk}/folders", json={"path": "figures"}, timeout=10
        )
        assert answer.status_code == 201, answer.text
        assert await page.expect("tree") == {"type": "tree"}
        await page.socket.close()

    run(scenario())


def test_a_demoted_editor_hears_of_it_and_their_editor_turns_read_only_at_once(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    api = server.api(owner)

    async def scenario():
        page = await page_of(server, coauthor, project)
        editor = await connect(server, coauthor, project)
        try:
            await page.expect("hello")
            answer = await asyncio.to_thread(
                api.post,
                f"{server.url}/v1/projects/{project.pk}/members",
                json={"username": coauthor.username, "role": "viewer"},
                timeout=10,
            )
            assert answer.status_code == 200, answer.text
            assert await page.expect("role") == {"type": "role", "role": "viewer"}
            await editor.wait_until(lambda: "read_only" in [r.get("code") for r in editor.refusals], timeout=PROMPT)
        finally:
            await page.socket.close()
            await close_all(editor)

    run(scenario())


def test_a_removed_member_is_closed_at_once(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    api = server.api(owner)

    async def scenario():
        page = await page_of(server, coauthor, project)
        editor = await connect(server, coauthor, project)
        try:
            await page.expect("hello")
            answer = await asyncio.to_thread(
                api.delete, f"{server.url}/v1/projects/{project.pk}/members/{coauthor.username}", timeout=10
            )
            assert answer.status_code == 204, answer.text
            assert (await page.expect("closed"))["code"] == protocol.CloseCode.FORBIDDEN
            with pytest.raises(ConnectionClosed) as closed:
                await page.next()
            assert closed.value.rcvd.code == protocol.CloseCode.FORBIDDEN
            assert (await editor.wait_closed(timeout=PROMPT)).code == protocol.CloseCode.FORBIDDEN
        finally:
            await close_all(editor)

    run(scenario())


def test_a_change_made_outside_any_server_reaches_the_pages_too(server, owner, coauthor, project):
    """A grant changed by a process that serves no pages (a management command; the maintenance loop finishing a
    build) goes through the channel layer to every server's pages."""
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")

    async def scenario():
        page = await page_of(server, coauthor, project)
        try:
            await page.expect("hello")
            await asyncio.to_thread(
                member_set, actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="viewer"
            )
            assert await page.expect("role") == {"type": "role", "role": "viewer"}
        finally:
            await page.socket.close()

    run(scenario())
