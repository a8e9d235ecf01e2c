import time

import pytest
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from tests.factories import ProjectFactory, UserFactory, bearer_token_for
from tests.processing.factories import deployment_toml

pytest_plugins = ["tests.browser_support"]

DEFAULT_TEST_OPERATIONS = ("latex.compile.pdf/v1", "pdf.index.text/v1", "test.echo/v1")
FLUSH_ATTEMPTS = 6  # 3.1 s of pauses in all


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``--dist loadgroup``) a module's tests stay on one worker, so the server a module
    starts is started once. A module that sets ``SPREAD_OVER_WORKERS = True`` (the benchmarks' smoke runs, each
    minutes long and starting servers of its own) has its tests spread over the workers instead."""
    for item in items:
        if not getattr(item.module, "SPREAD_OVER_WORKERS", False):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.fixture(autouse=True)
def _isolated_storage_and_deployment(settings, tmp_path):
    """No test sees ``var/`` of the checkout: a deployment is only what the test itself configures."""
    settings.QUIRE_STORAGE_DIR = str(tmp_path / "storage")
    settings.QUIRE_DEPLOYMENT_FILE = str(tmp_path / "no-deployment.toml")


@pytest.fixture(autouse=True)
def _a_broken_connection_is_not_kept():
    """A connection PostgreSQL cut (a terminated backend, a restart) fails the test that meets it, and no more:
    it is closed before the transactional test's flush, which would fail on it and skip Django's closing of
    the test's connections, leaving the dead one to every later test of this worker."""
    _broken_connections_closed()
    yield
    _broken_connections_closed()


def _broken_connections_closed() -> None:
    from django.db import connections

    for each in connections.all(initialized_only=True):
        if each.connection is not None and each.connection.broken:
            each.close()


@pytest.fixture(autouse=True)
def configured_as_the_site(request, settings):
    """A test beside a running Quire (a fixture of tests/live_site.py) configures this process as the server is."""
    from tests.live_site import SITE_FIXTURES

    for name in SITE_FIXTURES.intersection(request.fixturenames):
        for setting, value in request.getfixturevalue(name).same_settings.items():
            setattr(settings, setting, value)


@pytest.fixture(autouse=True)
def _browser_test_servers_settle(request):
    """A browser test's servers go on working for a closed page for a moment; its database is emptied only
    once they are done (see ``tests.browser_support.database_quiet``)."""
    yield
    if request.node.get_closest_marker("browser"):
        from tests.browser_support import database_quiet

        database_quiet()


@pytest.fixture(autouse=True, scope="session")
def _a_flush_that_meets_a_deadlock_runs_again():
    """A transactional test's flush empties every table in one TRUNCATE while a module's live server and agent
    may still be polling the queue; PostgreSQL breaks a deadlock between the two by failing one of them,
    sometimes the flush. The flush is then run again, after a pause that grows with each attempt, so that a
    poll that keeps meeting it (a loaded machine slows both) is over by then."""
    from django.test import TransactionTestCase

    original = TransactionTestCase._fixture_teardown

    def teardown(self):
        for attempt in range(FLUSH_ATTEMPTS):
            try:
                return original(self)
            except CommandError as error:
                if attempt == FLUSH_ATTEMPTS - 1 or not _caused_by_a_deadlock(error):
                    raise
            time.sleep(0.1 * 2**attempt)  # a backoff between retries, not a wait for a condition

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", teardown)
        yield


def _caused_by_a_deadlock(error: BaseException) -> bool:
    from psycopg.errors import DeadlockDetected

    while error is not None:
        if isinstance(error, DeadlockDetected):
            return True
        error = error.__cause__ or error.__context__
    return False


@pytest.fixture
def api_client_for():
    """``api_client_for(user)``: an API client authenticated with a real bearer token of that user."""

    def make(user) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_token_for(user)}")
        return client

    return make


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def project(owner):
    return ProjectFactory(owner=owner, starter=True)


@pytest.fixture
def owner_client(api_client_for, owner):
    return api_client_for(owner)


@pytest.fixture(scope="session")
def live_quire(django_db_setup, django_db_blocker, tmp_path_factory):
    """URL of a real gunicorn/uvicorn Quire on the test database (use with transactional tests)."""
    from tests.live_site import running_site

    root = tmp_path_factory.mktemp("live")
    with django_db_blocker.unblock(), running_site(root, operations=list(DEFAULT_TEST_OPERATIONS)) as site:
        yield site.url


@pytest.fixture(scope="session")
def channel_layer_of_tests(django_db_setup):
    """This process's channel layer on the test database, where the live servers a test starts have theirs: a
    change this process makes (a grant, a build finished here) reaches their pages as it would from any process
    that is not a server (the maintenance loop, a management command). Settings name the database before the
    test database exists."""
    from channels.layers import channel_layers
    from django.conf import settings
    from django.db import connection

    config = settings.CHANNEL_LAYERS["default"].get("CONFIG", {})
    before = config.get("NAME")
    if before is not None:
        config["NAME"] = connection.settings_dict["NAME"]
        channel_layers.backends.clear()
        settings.COLLAB_EVENTS_FROM_OTHER_PROCESSES = True  # the layer names the test database from here on
    yield
    settings.COLLAB_EVENTS_FROM_OTHER_PROCESSES = False
    if before is not None:
        config["NAME"] = before
        channel_layers.backends.clear()


@pytest.fixture(scope="session", autouse=True)
def _queue_listener_closed_at_the_end(django_db_setup):
    """Acquires served in this process start a LISTEN connection; close it before the test database is dropped."""
    yield
    from processing.queue.wakeups import wakeups

    wakeups.stop()


@pytest.fixture
def configure_deployment(settings, tmp_path):
    """``configure_deployment(operations=[...], limits={...}, partitions={...})``: write a deployment TOML and
    use it."""

    def write(operations=tuple(DEFAULT_TEST_OPERATIONS), limits=None, name="deployment.toml", partitions=None):
        path = tmp_path / name
        path.write_text(deployment_toml(operations=list(operations), limits=limits, partitions=partitions))
        settings.QUIRE_DEPLOYMENT_FILE = str(path)
        return path

    return write


@pytest.fixture(autouse=True)
def _office_host_of_this_process(settings):
    """No machine-wide `manage.py office_host` runs beside the tests: each test's process converts with a host
    of its own (OFFICE_HOST=process), as tests/live_server.py gives its servers. tests/office/test_shared_host.py
    starts the shared one where it is what is tested."""
    settings.OFFICE_HOST = "process"
