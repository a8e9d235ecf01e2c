import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from config.http.asgi_guards import RequestGuards  # noqa: E402  needs settings loaded above
from office import facade as office  # noqa: E402  needs the apps loaded above

application = RequestGuards(django_application)

office.host_warm_start()  # this server process's Office converters start now, not at the first preview
