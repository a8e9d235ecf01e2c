"""Plain HTTP goes to one of Django's two stock handlers, by the kind of view its path resolves to.

Every view but the Office previews is synchronous: those go to Django's WSGI handler, each request on a thread
of a pool (a2wsgi), its body read only when the view reads it. Under Django's ASGI handler the same requests
cost about twice as much CPU, because each middleware of the chain crosses into a thread and back.

The Office previews (office/api/views.py) are coroutines, so that a client that leaves cancels its
conversion: Django's ASGI handler watches for the disconnect and cancels the view, which WSGI cannot do.
Those go to it. A path that resolves to no view goes to WSGI, whose 404 is the site's own.

The WSGI adapter ends a body whose client left midway as if it were complete. Django would then hand a view
the part that arrived, which a file write would store as the file: ``_DeclaredLengthBody`` makes such a body
an ``OSError`` instead, which Django raises to the view as ``UnreadablePostError`` (400 ``body_incomplete``).

The coroutine views all answer GET, so other methods skip the lookup (about 70 µs on the worker protocol's
paths, which come after most of the site's); tests/config/test_http_handlers.py fails when a coroutine view
takes another.
"""

from functools import lru_cache

from a2wsgi import WSGIMiddleware
from asgiref.sync import iscoroutinefunction
from django.core.handlers.asgi import ASGIHandler
from django.core.wsgi import get_wsgi_application
from django.urls import Resolver404, resolve

ASYNC_VIEW_METHODS = ("GET", "HEAD")


@lru_cache(maxsize=4096)
def _view_is_async(path: str) -> bool:
    try:
        return iscoroutinefunction(resolve(path).func)
    except Resolver404:
        return False


class ByViewKind:
    def __init__(self, *, synchronous, asynchronous):
        self.synchronous = synchronous
        self.asynchronous = asynchronous

    async def __call__(self, scope, receive, send):
        path = scope["path"][len(scope.get("root_path", "")) :]
        asynchronous = scope["method"] in ASYNC_VIEW_METHODS and _view_is_async(path)
        application = self.asynchronous if asynchronous else self.synchronous
        await application(scope, receive, send)


class _DeclaredLengthBody:
    """``wsgi.input`` that raises when the body ends before the length its request declared."""

    def __init__(self, stream, declared: int):
        self._stream = stream
        self._left = declared

    def _counted(self, data: bytes, complete: bool) -> bytes:
        self._left -= len(data)
        if self._left > 0 and not complete:
            raise ConnectionAbortedError("The request body ended before its declared length.")
        return data

    def read(self, size: int | None = -1) -> bytes:
        data = self._stream.read(size)
        return self._counted(data, complete=size is not None and 0 <= size <= len(data))

    def readline(self, size: int | None = -1) -> bytes:
        data = self._stream.readline(size)
        return self._counted(data, complete=bool(data))  # a short line is a line; only an empty read ends


def _whole_bodies(wsgi_application):
    def application(environ, start_response):
        declared = environ.get("CONTENT_LENGTH", "")
        if declared.isdigit() and int(declared) > 0:
            environ["wsgi.input"] = _DeclaredLengthBody(environ["wsgi.input"], int(declared))
        return wsgi_application(environ, start_response)

    return application


def http_application(*, threads: int) -> ByViewKind:
    """The server's plain HTTP: ``threads`` request threads for the WSGI handler. One chunk of a streamed
    download waits while another is sent (the adapter's default queues ten a download)."""
    return ByViewKind(
        synchronous=WSGIMiddleware(_whole_bodies(get_wsgi_application()), workers=threads, send_queue_size=1),
        asynchronous=ASGIHandler(),
    )
