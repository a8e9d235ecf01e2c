import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from channels.auth import AuthMiddlewareStack  # noqa: E402  needs settings loaded above
from channels.routing import URLRouter  # noqa: E402
from django.core.handlers.asgi import ASGIHandler  # noqa: E402

from collaboration import facade as collaboration  # noqa: E402  needs the apps loaded above
from config.durable_commit import durable_commit_required  # noqa: E402
from config.http.asgi_guards import RequestGuards  # noqa: E402
from config.http.asgi_handler import SyncChainASGIHandler  # noqa: E402
from config.http.protocols import ProtocolRouter  # noqa: E402
from config.http.websocket_origin import SameOriginWebSockets  # noqa: E402
from office import facade as office  # noqa: E402

# Plain HTTP: Django with its middleware chain run synchronously (see config/http/asgi_handler.py for what that
# earns); QUIRE_ASGI_HANDLER=stock serves it with Django's own ASGIHandler, the benchmark's other arm.
django_application = ASGIHandler() if os.environ.get("QUIRE_ASGI_HANDLER") == "stock" else SyncChainASGIHandler()
# Live editing: the editor's WebSocket per open document, signed in by the session cookie, same origin only.
live_sockets = SameOriginWebSockets(AuthMiddlewareStack(URLRouter(collaboration.websocket_urlpatterns())))
application = ProtocolRouter(
    http=RequestGuards(django_application),
    websocket=live_sockets,
)

durable_commit_required()  # no server on a database whose commits a crash could take back
office.host_warm_start()  # this server process's Office converters start now, not at the first preview
