"""Quire running for a module of tests: a real server on the test database, its deployment, and (when the
tests build) a worker agent, made by one factory instead of a fixture per module.

A module names its site once (``quire = site_fixture("quire", "csp", operations=[LATEX])``); every test that
uses the fixture runs with this process configured as the server is (``configured_as_the_site`` in
tests/conftest.py): the same deployment file, storage and test operations, so what a test writes through
services the server reads, and the reverse.
"""

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.live_server import quire_server
from tests.processing.e2e.agents import running_agent
from tests.processing.factories import deployment_toml

# The names of the fixtures site_fixture made: the tests that use one are configured as its server.
SITE_FIXTURES: set[str] = set()


@dataclass
class Site:
    url: str
    root: Path
    storage: Path
    deployment: Path | None
    same_settings: dict = field(default_factory=dict)
    _agent: ExitStack = field(default_factory=ExitStack)

    def stop_agent(self) -> None:
        """Stop the site's agent: what authors see when no worker runs."""
        self._agent.close()


@contextmanager
def running_site(
    root: Path,
    *,
    operations: list[str] = (),
    limits: dict | None = None,
    environment: dict[str, str] | None = None,
    workers: int = 1,
    agent_slots: int = 0,
    test_operations: bool = False,
    distribution: str | None = None,
):
    """A server in ``root`` whose deployment offers ``operations`` (none: no deployment file), with an agent
    of ``agent_slots`` slots building them when there are any; ``distribution`` names the build's
    distribution (config/distributions/) when it is not the default."""
    storage = root / "storage"
    storage.mkdir()
    server_environment = dict(environment or {})
    same_settings: dict = {"QUIRE_STORAGE_DIR": str(storage)}
    deployment = None
    if operations:
        deployment = root / "deployment.toml"
        deployment.write_text(deployment_toml(operations=list(operations), limits=limits))
        server_environment["QUIRE_DEPLOYMENT_FILE"] = same_settings["QUIRE_DEPLOYMENT_FILE"] = str(deployment)
    if distribution:
        server_environment["QUIRE_DISTRIBUTION"] = same_settings["QUIRE_DISTRIBUTION"] = distribution
    if test_operations:
        server_environment["QUIRE_TEST_OPERATIONS"] = "true"
        same_settings["QUIRE_TEST_OPERATIONS"] = True
    with quire_server(storage_dir=storage, extra_env=server_environment, workers=workers) as url:
        site = Site(url=url, root=root, storage=storage, deployment=deployment, same_settings=same_settings)
        with site._agent:
            if agent_slots:
                agent = ("--operations", ",".join(operations), "--slots", str(agent_slots), "--acquire-wait", "1")
                site._agent.enter_context(running_agent(url, root, *agent, name=root.name))
            yield site


def site_fixture(fixture_name: str, directory: str, *, scope: str = "module", needs: tuple[str, ...] = (), **options):
    """A fixture named ``fixture_name`` that runs a site (see ``running_site`` for ``options``) in a fresh
    directory named after ``directory``, once per ``scope``; ``needs`` names fixtures to start first."""
    SITE_FIXTURES.add(fixture_name)

    @pytest.fixture(scope=scope, name=fixture_name)
    def site(django_db_setup, django_db_blocker, tmp_path_factory, request):
        for name in needs:
            request.getfixturevalue(name)
        with django_db_blocker.unblock():
            with running_site(tmp_path_factory.mktemp(directory), **options) as running:
                yield running
            # What the agent and the server wrote as they stopped (a drained session, closed sockets) came after
            # the last test's flush: the tests that follow on this database expect it empty.
            call_command("flush", interactive=False, verbosity=0)

    return site
