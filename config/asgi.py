import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from channels.auth import AuthMiddlewareStack  # noqa: E402  needs settings loaded above
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from collaboration import facade as collaboration  # noqa: E402  needs the apps loaded above
from config.http.handlers import http_application  # noqa: E402
from config.http.protocols import live_editing_lifespan  # noqa: E402
from config.http.websocket_origin import SameOriginWebSockets  # noqa: E402
from foundation.database.durable_commit import durable_commit_required  # noqa: E402
from foundation.env import env  # noqa: E402
from office import facade as office  # noqa: E402

# Plain HTTP: Django's stock handlers, WSGI for the synchronous views and ASGI for the coroutine ones
# (config/http/handlers.py). A long poll holds its thread while it waits: the pool is sized for every agent's
# two long polls and the API's waits besides the requests that come and go.
http = http_application(threads=env("QUIRE_HTTP_THREADS"))
# Live editing: the editor's WebSocket per open document, signed in by the session cookie, same origin only.
live_sockets = SameOriginWebSockets(AuthMiddlewareStack(URLRouter(collaboration.websocket_urlpatterns())))
application = ProtocolTypeRouter({"http": http, "websocket": live_sockets, "lifespan": live_editing_lifespan})

durable_commit_required()  # no server on a database whose commits a crash could take back
office.host_warm_start()  # this server process's Office converters start now, not at the first preview
