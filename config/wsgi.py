import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from foundation.database.durable_commit import durable_commit_required  # noqa: E402  needs the settings loaded above

durable_commit_required()  # no server on a database whose commits a crash could take back (as config/asgi.py)
