"""``DATABASE_DIRECT_URL``: with ``DATABASE_URL`` going through a transaction pooler, every connection that
LISTENs (the wake-up listener, the relay's wake-ups, a NOTIFY consumer, the channel layer) goes to PostgreSQL
itself; requests keep the pooled URL. Read from a fresh process, as a server reads its environment."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POOLED = "postgresql://quire:pw@pooler.internal:6432/quire"
DIRECT = "postgresql://quire:pw@primary.internal:5432/quire?sslmode=verify-full&connect_timeout=3"
READ = """
import json
from django.conf import settings
from django.db import connections
from foundation.database.direct import direct_connection_params
from processing.queue.wakeups import wakeups
layer = settings.CHANNEL_LAYERS["default"]["CONFIG"]
print(json.dumps({
    "requests": connections["default"].get_connection_params()["host"],
    "listener": wakeups.listener_connection_params()["host"],
    "listener_tls": wakeups.listener_connection_params().get("sslmode"),
    "listener_timeout": wakeups.listener_connection_params().get("connect_timeout"),
    "direct": direct_connection_params()["host"],
    "channel_layer": layer["HOST"],
    "request_options": sorted(connections["default"].get_connection_params()),
    "request_prepare_threshold": settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"],
    "request_server_side_cursors": not settings.DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"],
    "direct_session_options": direct_connection_params().get("options"),
    "direct_alias": "direct" in settings.DATABASES,
    "direct_prepare_threshold": settings.DATABASES.get("direct", {}).get("OPTIONS", {}).get("prepare_threshold"),
    "direct_pool": settings.DATABASES.get("direct", {}).get("OPTIONS", {}).get("pool"),
}))
"""


USES = ("requests", "listener", "listener_tls", "listener_timeout", "direct", "channel_layer")


def _hosts(**environment) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith("DATABASE_")}
    env.update(environment, CHANNEL_LAYER_URL="")
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", READ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_listening_connections_go_to_postgresql_itself_and_requests_through_the_pooler():
    hosts = _hosts(DATABASE_URL=POOLED, DATABASE_DIRECT_URL=DIRECT)
    assert {use: hosts[use] for use in USES} == {
        "requests": "pooler.internal",
        "listener": "primary.internal",
        "listener_tls": "verify-full",  # the URL's options carry over
        "listener_timeout": 3,
        "direct": "primary.internal",
        "channel_layer": "primary.internal",
    }


def test_through_the_pooler_nothing_outlives_a_transaction_and_postgresql_itself_keeps_the_session_setting():
    hosts = _hosts(DATABASE_URL=POOLED, DATABASE_DIRECT_URL=DIRECT)

    assert "options" not in hosts["request_options"]  # PgBouncer 1.18 refuses the startup parameter
    assert hosts["request_prepare_threshold"] is None  # psycopg prepares nothing
    assert hosts["request_server_side_cursors"] is False
    assert hosts["direct_session_options"] == "-c idle_in_transaction_session_timeout=60000"


def test_through_the_pooler_statements_prepare_on_postgresql_itself_from_a_small_pool_of_its_connections():
    default = _hosts(DATABASE_URL=POOLED, DATABASE_DIRECT_URL=DIRECT)
    sized = _hosts(DATABASE_URL=POOLED, DATABASE_DIRECT_URL=DIRECT, DATABASE_DIRECT_POOL_SIZE="2")
    none = _hosts(DATABASE_URL=POOLED, DATABASE_DIRECT_URL=DIRECT, DATABASE_DIRECT_POOL_SIZE="0")

    assert default["direct_prepare_threshold"] == 5
    assert default["direct_pool"] == {"min_size": 1, "max_size": 4, "timeout": 10}
    assert sized["direct_pool"]["max_size"] == 2
    assert none["direct_pool"] is None  # nothing lent: every statement through the pooler, unprepared


def test_without_a_direct_url_everything_uses_the_database_url_and_requests_prepare():
    hosts = _hosts(DATABASE_URL=POOLED)

    assert {hosts[use] for use in ("requests", "listener", "direct", "channel_layer")} == {"pooler.internal"}
    assert "options" in hosts["request_options"] and hosts["request_prepare_threshold"] == 5
    assert hosts["request_server_side_cursors"] is True
    assert hosts["direct_alias"] is False  # claims prepare on the default connection
