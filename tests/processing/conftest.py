import pytest


@pytest.fixture(autouse=True)
def _deployment(configure_deployment, settings):
    settings.QUIRE_TEST_OPERATIONS = True
    configure_deployment()


def submit_build(client, project, *, key="key-1", body=None):
    return client.post(f"/v1/projects/{project.pk}/builds", body or {}, format="json", HTTP_IDEMPOTENCY_KEY=key)
