import pytest

from tests.processing.factories import deployment_toml

ALL_TEST_OPERATIONS = ["latex.compile.pdf/v1", "pdf.index.text/v1", "test.echo/v1"]


@pytest.fixture
def configure_deployment(settings, tmp_path):
    """``configure_deployment(operations=[...], limits={...})``: write a deployment TOML and use it."""

    def write(operations=tuple(ALL_TEST_OPERATIONS), limits=None, name="deployment.toml"):
        path = tmp_path / name
        path.write_text(deployment_toml(operations=list(operations), limits=limits))
        settings.QUIRE_DEPLOYMENT_FILE = str(path)
        return path

    return write


@pytest.fixture(autouse=True)
def _deployment(configure_deployment, settings):
    settings.QUIRE_TEST_OPERATIONS = True
    configure_deployment()


def submit_build(client, project, *, key="key-1", body=None):
    return client.post(f"/v1/projects/{project.pk}/builds", body or {}, format="json", HTTP_IDEMPOTENCY_KEY=key)
