import pytest


@pytest.fixture(autouse=True)
def _deployment(configure_deployment, settings):
    """Operators act on Processing's jobs: the same deployment as Processing's tests (test operations on)."""
    settings.QUIRE_TEST_OPERATIONS = True
    configure_deployment()
