import pytest

from tests.library.pdfs import text_pdf


@pytest.fixture(autouse=True)
def _deployment(configure_deployment, settings):
    """A deployment whose workers run every operation, the PDF indexing among them (as tests/processing's)."""
    settings.QUIRE_TEST_OPERATIONS = True
    configure_deployment()


@pytest.fixture
def pdf():
    return text_pdf(["The first page talks about lighthouses.", "The second page is about harbours."])


def post_pdf(client, project, data, *, key="k-1", title=None, filename="report.pdf", content_type="application/pdf"):
    query = "&".join(
        part for part in (f"filename={filename}" if filename else "", f"title={title}" if title else "") if part
    )
    return client.generic(
        "POST",
        f"/v1/projects/{project.pk}/library?{query}",
        data,
        content_type=content_type,
        HTTP_IDEMPOTENCY_KEY=key,
    )


def put_pdf(client, project, document_id, data, *, revision, key="r-1", content_type="application/pdf"):
    headers = {"HTTP_IDEMPOTENCY_KEY": key}
    if revision is not None:
        headers["HTTP_IF_MATCH"] = revision if isinstance(revision, str) else f'"{revision}"'
    return client.generic(
        "PUT", f"/v1/projects/{project.pk}/library/{document_id}/pdf", data, content_type=content_type, **headers
    )
