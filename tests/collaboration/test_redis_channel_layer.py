"""With ``CHANNEL_LAYER_URL=redis://…`` the server processes pass live edits through Redis (channels-redis)."""

import asyncio
import os

import pytest
import redis
from django.test import Client

from collaboration.live.client import LiveClient
from tests.factories import ProjectFactory
from tests.live_server import quire_server
from workspace.models import ProjectFile

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REDIS_URL = os.environ.get("QUIRE_TEST_REDIS_URL", "redis://127.0.0.1:6379/7")


def _redis_reachable() -> bool:
    try:
        return redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError:
        return False


@pytest.mark.skipif(not _redis_reachable(), reason=f"no Redis at {REDIS_URL} (QUIRE_TEST_REDIS_URL)")
def test_editors_on_two_processes_converge_through_redis(owner, tmp_path):
    project = ProjectFactory(owner=owner, starter=True)
    file = ProjectFile.objects.get(project=project, path="main.tex")
    browser = Client()
    browser.force_login(owner)
    cookie = browser.cookies["sessionid"].value
    environment = {"CHANNEL_LAYER_URL": REDIS_URL}
    for directory in ("a", "b"):
        (tmp_path / directory / "storage").mkdir(parents=True)
    with (
        quire_server(storage_dir=tmp_path / "a" / "storage", extra_env=environment) as first,
        quire_server(storage_dir=tmp_path / "b" / "storage", extra_env=environment) as second,
    ):

        async def edit_together() -> tuple[str, str]:
            path = f"/ws/projects/{project.pk}/documents/{file.pk}"
            alice = await LiveClient(first.replace("http", "ws") + path, cookie, first).open()
            bob = await LiveClient(second.replace("http", "ws") + path, cookie, second).open()
            await asyncio.wait_for(asyncio.gather(alice.synced.wait(), bob.synced.wait()), 10)
            alice.insert(0, "% from the first process\n")
            bob.insert(len(bob.text), "% from the second process\n")
            await bob.wait_until(lambda: "% from the first process" in bob.text)
            await alice.wait_until(lambda: "% from the second process" in alice.text)
            await alice.close(), await bob.close()
            return alice.text, bob.text

        alice_text, bob_text = asyncio.run(edit_together())

    assert alice_text == bob_text
    assert alice_text.startswith("% from the first process\n") and alice_text.endswith("% from the second process\n")
