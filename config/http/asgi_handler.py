"""Django's ASGI handler with the middleware chain run as one synchronous call.

Under ASGI Django builds an asynchronous middleware chain, and every
``MiddlewareMixin`` middleware then crosses into a thread twice per request
(``process_request`` and ``process_response``): with our ten middlewares and a
sync view that is some thirty thread hops, about 4 ms a request on these
machines, against 0.5 ms for the work itself. All our middlewares and views are
synchronous, so the chain is built synchronously and crosses into its thread
once. ``thread_sensitive`` keeps that thread the one the request's signals and
database connection use.
"""

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class SyncChainASGIHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)
