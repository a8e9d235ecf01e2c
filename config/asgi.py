import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()

from office import facade as office  # noqa: E402  needs the apps loaded above

office.host_warm_start()  # this server process's Office converters start now, not at the first preview
