import pytest

from office.host import HostLimits
from office.runtime import HostRuntime, host_runtime_replace
from tests.office.fakes import FakeEngine, InstantEngine


def installed_runtime(engine_factory, **limits):
    """Make ``engine_factory``'s host this process's Office host until the returned runtime closes."""
    runtime = HostRuntime(engine_factory=engine_factory, limits=HostLimits(**limits), background_enabled=True)
    previous = host_runtime_replace(runtime)
    if previous is not None:
        previous.close()
    return runtime


@pytest.fixture
def instant_office():
    """This process's Office host on an engine that converts at once."""
    runtime = installed_runtime(InstantEngine)
    yield runtime
    host_runtime_replace(None)
    runtime.close()


@pytest.fixture
def held_office():
    """This process's Office host on an engine whose conversions wait for the test."""
    runtime = installed_runtime(FakeEngine)
    yield runtime
    host_runtime_replace(None)
    runtime.close()
