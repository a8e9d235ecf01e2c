"""The worker protocol's routes are served by a lean edge: its own short middleware chain and URL list."""

import asyncio
import json
import threading

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.asgi import application
from config.http.asgi_handler import InMemoryEdgeHandler, SyncChainASGIHandler
from tests.config import edge_urls


def _request(
    path: str, *, headers: list[tuple[bytes, bytes]] | None = None, app=application
) -> tuple[int, dict[bytes, bytes], bytes]:
    return asyncio.run(_call(app, path, headers=headers))


async def _call(app, path: str, *, headers=None) -> tuple[int, dict[bytes, bytes], bytes]:
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": b"",
        "headers": headers or [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    sent, requested = [], []

    async def receive():
        if not requested:
            requested.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    await app(scope, receive, send)
    start, *bodies = sent
    headers = {name.lower(): value for name, value in start["headers"]}
    return start["status"], headers, b"".join(message.get("body", b"") for message in bodies)


@pytest.mark.django_db
def test_a_worker_route_skips_the_sites_page_middlewares_but_keeps_its_security_headers():
    status, headers, body = _request("/internal/processing/v1/sessions/00000000-0000-0000-0000-000000000000/drain")

    assert status == 401 and json.loads(body)["error"]["code"]  # the worker API answered: the view ran
    assert headers[b"x-content-type-options"] == b"nosniff"  # SecurityMiddleware ran
    assert b"x-frame-options" not in headers, "clickjacking protection is for pages; the edge does not run it"
    assert b"vary" not in headers, "no session or CSRF middleware looked at the cookies"


@pytest.mark.django_db
def test_the_rest_of_the_site_still_runs_the_whole_chain():
    status, headers, _ = _request("/v1/projects")

    assert status == 401
    assert headers[b"x-frame-options"] == b"DENY"


@pytest.mark.django_db
def test_an_unknown_worker_path_is_a_404_in_the_apis_error_shape():
    status, _, body = _request("/internal/processing/v1/no-such-route")

    assert status == 404
    assert json.loads(body)["error"]["code"] == "not_found"


@pytest.mark.django_db
def test_the_worker_edge_still_refuses_oversized_headers_and_unknown_hosts():
    path = "/internal/processing/v1/sessions"
    status, _, body = _request(path, headers=[(b"host", b"127.0.0.1"), (b"x-big", b"x" * 20_000)])
    assert (status, json.loads(body)["error"]["code"]) == (431, "headers_too_large")

    status, _, _ = _request(path, headers=[(b"host", b"attacker.example")])
    assert status == 400


def test_a_middleware_with_hooks_the_lean_chain_does_not_run_is_refused():
    with pytest.raises(ImproperlyConfigured, match="process_view"):
        SyncChainASGIHandler(middleware=["django.middleware.csrf.CsrfViewMiddleware"])


@pytest.fixture
def edge():
    return InMemoryEdgeHandler(middleware=[], urlconf="tests.config.edge_urls", threads=4)


def test_the_edge_sends_a_streamed_answer_whole_with_its_status_and_headers(edge):
    status, headers, body = _request("/streamed", app=edge)

    assert (status, body, headers[b"x-edge"]) == (202, b"first second", b"kept")


def test_a_request_waiting_on_the_edge_does_not_hold_up_the_next_one(edge):
    edge_urls.released.clear()

    async def both():
        waiting = asyncio.create_task(_call(edge, "/wait"))
        await asyncio.sleep(0.05)  # the first request is now waiting on its thread
        released = await _call(edge, "/release")
        return released, await waiting

    released, waited = asyncio.run(both())

    assert released[2] == b"done" and waited[2] == b"released"


def test_a_streamed_answer_is_finished_on_the_thread_that_served_it(edge):
    from django.core.signals import request_finished

    finished_on = []

    def note_thread(**kwargs):
        finished_on.append(threading.current_thread().name)

    request_finished.connect(note_thread)
    try:
        _request("/streamed", app=edge)
    finally:
        request_finished.disconnect(note_thread)

    assert len(finished_on) == 1 and finished_on[0].startswith("edge"), "its database connection is that thread's"
