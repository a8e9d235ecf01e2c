"""The one place that reads the environment.

Every setting Quire reads comes from here, with its documented default. The
README lists them; keep the two in step.
"""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env(
    # Off unless asked for: the technical 404 and 500 pages list routes and settings. `make run` turns it on.
    DEBUG=(bool, False),
    # Served over HTTPS (directly or behind a proxy that says so in X-Forwarded-Proto): secure cookies, HSTS,
    # and plain HTTP redirected, except /metrics and /healthz (asked over plain HTTP inside the deployment).
    QUIRE_HTTPS=(bool, False),
    QUIRE_HSTS_SECONDS=(int, 365 * 24 * 3600),
    # Start even when the database's commits are not flushed (synchronous_commit = off): see
    # foundation/database/durable_commit.py
    QUIRE_ALLOW_ASYNC_COMMIT=(bool, False),
    # Sign-in throttling (django-axes): failures per account at an address, and per address alone, before a
    # lockout, and its length
    QUIRE_SIGNIN_FAILURE_LIMIT=(int, 5),
    QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT=(int, 100),
    QUIRE_SIGNIN_LOCKOUT_MINUTES=(int, 15),
    QUIRE_INVARIANT_CHECK_SECONDS=(int, 300),
    # Addresses of the proxies in front of Quire (HAProxy in `make cluster`): only their X-Forwarded-For and
    # X-Forwarded-Proto are believed. Empty: no proxy, the connection's own address is the client's.
    QUIRE_TRUSTED_PROXIES=(list, []),
    # Request threads of a server process: a long poll (an agent's acquire or cancellation watch, an API
    # client's ?wait=) holds one while it waits, so there are many more than cores
    QUIRE_HTTP_THREADS=(int, 128),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost", "[::1]", "testserver"]),
    DATABASE_URL=(str, ""),
    # PostgreSQL itself, for the connections that LISTEN, when DATABASE_URL goes through a transaction pooler
    DATABASE_DIRECT_URL=(str, ""),
    SECRET_KEY=(str, ""),
    QUIRE_DEPLOYMENT_FILE=(str, ""),
    QUIRE_DISTRIBUTION=(str, "community"),
    QUIRE_STORAGE_DIR=(str, str(VAR_DIR / "storage")),
    QUIRE_LOG_LEVEL=(str, "INFO"),
    QUIRE_METRICS_PUBLIC=(bool, False),
    # Office previews (office/): converter slots, limits and caches of the host. By default the server processes
    # send previews to the machine's one host (`manage.py office_host`, which `make run` starts) on
    # OFFICE_HOST_SOCKET (default var/office.sock); OFFICE_HOST=process gives each server process its own.
    OFFICE_HOST=(str, "shared"),
    OFFICE_HOST_SOCKET=(str, ""),
    OFFICE_SLOTS=(int, 2),
    # The paper of a sheet that names none (libpaper's names: a4, letter, legal, a3, …)
    OFFICE_PAPER_SIZE=(str, "a4"),
    OFFICE_CONVERSION_TIMEOUT_SECONDS=(float, 30.0),
    OFFICE_START_TIMEOUT_SECONDS=(float, 60.0),
    OFFICE_MAX_CONVERSIONS_PER_SLOT=(int, 200),
    OFFICE_MAX_INPUT_BYTES=(int, 64 * 1024 * 1024),
    OFFICE_MAX_PDF_BYTES=(int, 64 * 1024 * 1024),
    OFFICE_MAX_SOURCE_BYTES=(int, 256 * 1024 * 1024),
    OFFICE_MAX_READERS=(int, 256),
    OFFICE_MAX_QUEUED=(int, 64),
    OFFICE_CACHE_ENTRIES=(int, 128),
    OFFICE_CACHE_BYTES=(int, 256 * 1024 * 1024),
    OFFICE_CACHE_ENTRY_BYTES=(int, 32 * 1024 * 1024),
    OFFICE_INDEX_ENTRIES=(int, 4096),
    OFFICE_BACKGROUND_ENABLED=(bool, True),
    OFFICE_WARM_ON_START=(bool, True),
    OFFICE_ALLOW_UNSANDBOXED=(bool, False),
    OFFICE_SANDBOX_UIDS_START=(int, 1_000_002_000),
    OFFICE_SOFFICE=(str, "soffice"),
    OFFICE_UNO_PYTHON=(str, "/usr/bin/python3"),
    # PDF library (seed 002): accepted PDFs and their full-text search
    LIBRARY_MAX_PDF_BYTES=(int, 64 * 1024 * 1024),
    LIBRARY_SEARCH_CONFIG=(str, "english"),
    # Outbox relay: where committed events are published (empty = NOTIFY on Quire's own database)
    OUTBOX_BROKER_URL=(str, ""),
    OUTBOX_NOTIFY_CHANNEL=(str, "quire_outbox"),
    OUTBOX_AMQP_EXCHANGE=(str, "quire.outbox"),
    OUTBOX_AMQP_QUEUE=(str, "quire.outbox"),
    OUTBOX_RELAY_BATCH=(int, 100),
    OUTBOX_CLAIM_SECONDS=(int, 30),
    OUTBOX_BACKOFF_MAX_SECONDS=(int, 300),
    # Live collaboration (collaboration/live/): the channel layer between server processes and the socket's bounds
    CHANNEL_LAYER_URL=(str, ""),
    COLLAB_MAX_UPDATE_BYTES=(int, 3 * 1024 * 1024),
    QUIRE_HISTORY_GAP_SECONDS=(int, 300),
    QUIRE_HISTORY_DAYS=(int, 0),
    COLLAB_MESSAGES_PER_SECOND=(float, 60.0),
    COLLAB_MESSAGE_BURST=(int, 300),
    COLLAB_MAX_CONNECTIONS_PER_USER=(int, 16),
    COLLAB_MAX_CONNECTIONS_PER_DOCUMENT=(int, 64),
    COLLAB_IDLE_SECONDS=(float, 120.0),
    COLLAB_ACCESS_CHECK_SECONDS=(float, 2.0),
    COLLAB_PROJECTION_DELAY_SECONDS=(float, 1.0),
)
