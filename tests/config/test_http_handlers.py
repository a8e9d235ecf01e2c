"""Each HTTP request reaches the stock Django handler its view needs (config/http/handlers.py)."""

import asyncio

import pytest
from asgiref.sync import iscoroutinefunction
from django.urls import URLPattern, URLResolver, get_resolver

from config.http.handlers import ASYNC_VIEW_METHODS, ByViewKind

PROJECT = "/v1/projects/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b11"


def _handler_for(path: str, root_path: str = "", method: str = "GET") -> str:
    chosen = []

    def recording(name):
        async def application(scope, receive, send):
            chosen.append(name)

        return application

    router = ByViewKind(synchronous=recording("wsgi"), asynchronous=recording("asgi"))
    scope = {"type": "http", "method": method, "path": root_path + path, "root_path": root_path}
    asyncio.run(router(scope, None, None))
    return chosen[0]


@pytest.mark.parametrize(
    ("path", "handler"),
    [
        (f"{PROJECT}/files/deck.pptx/preview.pdf", "asgi"),  # a coroutine view: a disconnect cancels it
        (f"{PROJECT}/files/sheet.xlsx/inspection", "asgi"),
        (f"{PROJECT}/files/main.tex", "wsgi"),
        (f"{PROJECT}/files/notes.txt/preview.pdf", "wsgi"),  # not an Office file: the file route's 404
        ("/internal/processing/v1/sessions", "wsgi"),
        ("/healthz", "wsgi"),
        ("/no/such/page", "wsgi"),
    ],
)
def test_coroutine_views_go_to_djangos_asgi_handler_and_the_rest_to_its_wsgi_handler(path, handler):
    assert _handler_for(path) == handler


def test_the_view_is_found_below_the_sites_root_path():
    assert _handler_for(f"{PROJECT}/files/deck.pptx/preview.pdf", root_path="/quire") == "asgi"


def _views(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _views(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            yield pattern.callback


def test_every_coroutine_view_answers_only_the_methods_the_router_looks_up():
    coroutine_views = [view for view in _views(get_resolver().url_patterns) if iscoroutinefunction(view)]
    methods = {
        method.upper()
        for view in coroutine_views
        for method in view.cls.http_method_names
        if method != "options" and hasattr(view.cls, method)
    }

    assert len(coroutine_views) == 2  # the Office preview and inspection
    assert methods <= set(ASYNC_VIEW_METHODS)


def test_other_methods_go_to_wsgi_without_a_lookup():
    assert _handler_for(f"{PROJECT}/files/deck.pptx/preview.pdf", method="POST") == "wsgi"
