import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from channels.auth import AuthMiddlewareStack  # noqa: E402  needs settings loaded above
from channels.routing import URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from collaboration import facade as collaboration  # noqa: E402  needs the apps loaded above
from config.http.asgi_guards import RequestGuards  # noqa: E402
from config.http.asgi_handler import InMemoryEdgeHandler, SyncChainASGIHandler, by_path_prefix  # noqa: E402
from config.http.protocols import ProtocolRouter  # noqa: E402
from config.http.websocket_origin import SameOriginWebSockets  # noqa: E402
from office import facade as office  # noqa: E402

django_application = SyncChainASGIHandler()
# Worker agents authenticate with bearer tokens and never use sessions, cookies, CSRF, messages or pages: their
# routes skip those middlewares and the site's URL list (resolving against it alone was ≈7 % of a server's time),
# and are served by the edge's shared threads (their answers are in memory).
worker_edge = InMemoryEdgeHandler(middleware=settings.WORKER_EDGE_MIDDLEWARE, urlconf="config.worker_urls")
# Live editing: the editor's WebSocket per open document, signed in by the session cookie, same origin only.
live_sockets = SameOriginWebSockets(AuthMiddlewareStack(URLRouter(collaboration.websocket_urlpatterns())))
application = ProtocolRouter(
    http=RequestGuards(by_path_prefix("/internal/processing/v1/", worker_edge, django_application)),
    websocket=live_sockets,
)

office.host_warm_start()  # this server process's Office converters start now, not at the first preview
