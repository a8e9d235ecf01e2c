"""A socket lives only as long as the sign-in it was opened with: signing out, a deactivated account or a changed
password closes the user's editor and project-page sockets (4401) within the access-check interval, and nothing
typed afterwards is stored. The shared server re-reads access twice a second."""

import asyncio
import contextlib
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from websockets.asyncio.client import connect as websocket_connect
from websockets.exceptions import ConnectionClosed

from tests.collaboration.live.helpers import close_all, connect, file_id_of, run, session_cookie, stored_text

pytestmark = pytest.mark.django_db(transaction=True)

SIGNED_OUT = 4401
WITHIN = 5.0  # seconds: ten access checks


@pytest.fixture
def paper(project, owner, coauthor):
    from access.services import member_set

    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    return project


def sign_out(cookie: str) -> None:
    client = Client()
    client.cookies["sessionid"] = cookie
    assert client.post(reverse("access:logout")).status_code == 302


def deactivate(user) -> None:
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)


def change_password(user) -> None:
    user.set_password("a new password nobody typed before")
    user.save(update_fields=["password"])


ENDINGS = {
    "signed_out": lambda user, cookie: sign_out(cookie),
    "deactivated": lambda user, cookie: deactivate(user),
    "password_changed": lambda user, cookie: change_password(user),
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_the_sign_in_ending_closes_the_users_editor_and_nothing_typed_after_is_stored(
    server, owner, coauthor, paper, ending
):
    file_id = file_id_of(paper)
    cookie = session_cookie(coauthor)

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, owner, paper)
            bob = await connect(server, coauthor, paper, cookie=cookie)
            bob.insert(0, "% typed while signed in\n")
            await bob.wait_until(bob.saved)
            ENDINGS[ending](coauthor, cookie)

            closed = await bob.wait_closed(timeout=WITHIN)
            assert closed.code == SIGNED_OUT, closed
            bob.insert(0, "% typed after\n")
            alice.insert(0, "% the owner goes on\n")
            await alice.wait_until(alice.saved)
            assert alice.closed is None
        finally:
            await close_all(alice, bob)

    run(scenario())
    text = stored_text(file_id)
    assert "typed while signed in" in text and "the owner goes on" in text
    assert "typed after" not in text


def test_signing_out_closes_only_that_sessions_sockets(server, coauthor, paper):
    cookie, other_browser = session_cookie(coauthor), session_cookie(coauthor)

    async def scenario():
        signed_out = still_in = None
        try:
            signed_out = await connect(server, coauthor, paper, cookie=cookie)
            still_in = await connect(server, coauthor, paper, cookie=other_browser)
            sign_out(cookie)
            assert (await signed_out.wait_closed(timeout=WITHIN)).code == SIGNED_OUT
            still_in.insert(0, "% from the other browser\n")
            await still_in.wait_until(still_in.saved)
            assert still_in.closed is None
        finally:
            await close_all(signed_out, still_in)

    run(scenario())


@pytest.mark.parametrize("ending", ENDINGS)
def test_the_sign_in_ending_closes_the_project_pages_events_socket(server, coauthor, paper, ending):
    cookie = session_cookie(coauthor)

    async def scenario():
        socket = await websocket_connect(
            f"ws://127.0.0.1:{server.port}/ws/projects/{paper.pk}/events",
            additional_headers={"Cookie": f"sessionid={cookie}"},
            origin=server.origin,
        )
        async with socket:
            assert json.loads(await socket.recv())["type"] == "hello"
            ENDINGS[ending](coauthor, cookie)
            messages = []
            with contextlib.suppress(ConnectionClosed):
                async with asyncio.timeout(WITHIN):
                    async for frame in socket:
                        messages.append(json.loads(frame))
            assert socket.close_code == SIGNED_OUT
            assert messages[-1]["type"] == "closed" and "signed out" in messages[-1]["message"]

    run(scenario())
