import pytest


@pytest.fixture(autouse=True)
def _deployment(configure_deployment, settings, request):
    """Processing's tests run with a deployment of the test operations, except beside a running Quire, whose
    own configuration they take (``configured_as_the_site`` in tests/conftest.py)."""
    from tests.live_site import SITE_FIXTURES

    if SITE_FIXTURES.intersection(request.fixturenames):
        return
    settings.QUIRE_TEST_OPERATIONS = True
    configure_deployment()


def submit_build(client, project, *, key="key-1", body=None):
    return client.post(f"/v1/projects/{project.pk}/builds", body or {}, format="json", HTTP_IDEMPOTENCY_KEY=key)
