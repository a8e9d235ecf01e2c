import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from config.http.asgi_guards import RequestGuards  # noqa: E402  needs settings loaded above
from config.http.asgi_handler import SyncChainASGIHandler  # noqa: E402
from office import facade as office  # noqa: E402  needs the apps loaded above

django_application = SyncChainASGIHandler()
application = RequestGuards(django_application)

office.host_warm_start()  # this server process's Office converters start now, not at the first preview
