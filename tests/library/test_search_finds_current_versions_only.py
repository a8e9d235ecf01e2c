"""Search: current searchable versions only, project access, hostile queries never a 500."""

import pytest

from tests.factories import ProjectFactory, UserFactory
from tests.library.factories import accept, document_at_revision
from tests.library.ingest import index_to_success
from tests.library.pdfs import text_pdf

pytestmark = pytest.mark.django_db


def _search(client, project, query, **extra):
    return client.get(f"/v1/projects/{project.pk}/library/search", {"q": query, **extra})


@pytest.fixture
def indexed(owner, project):
    """A document whose current searchable version speaks of harbours; its first version spoke of lighthouses."""
    document = document_at_revision(owner, project, revision=1, text="the old lighthouse keeper")
    current = accept(owner, project, text_pdf(["x", "y"]), document_id=document.pk, revision=1)
    index_to_success(current.job_id, ["Harbours & piers < 5 metres on the southern coast", "A page about harbour fees"])
    return current


def test_hits_come_from_current_searchable_versions_only(owner_client, project, indexed):
    old = _search(owner_client, project, "lighthouse")
    new = _search(owner_client, project, "harbour")

    assert (old.status_code, old.json()["hits"]) == (200, [])
    hits = new.json()["hits"]
    assert {(hit["version_id"], hit["page"]) for hit in hits} == {
        (str(indexed.version_id), 1),
        (str(indexed.version_id), 2),
    }
    assert all(hit["document_id"] == str(indexed.document_id) for hit in hits)


def test_a_version_still_indexing_is_not_searched(owner, owner_client, project, indexed):
    accept(owner, project, text_pdf(["zebra crossing"]), document_id=indexed.document_id, revision=2)

    assert _search(owner_client, project, "zebra").json()["hits"] == []
    assert len(_search(owner_client, project, "harbour").json()["hits"]) == 2


def test_snippets_highlight_matches_and_escape_the_pdfs_own_markup(owner_client, project, indexed):
    hit = next(hit for hit in _search(owner_client, project, "piers").json()["hits"] if hit["page"] == 1)

    assert "<mark>piers</mark>" in hit["snippet_html"]
    assert "&amp;" in hit["snippet_html"] and "&lt; 5" in hit["snippet_html"]
    assert "piers" in hit["snippet"] and "<mark>" not in hit["snippet"]


def test_search_stays_inside_the_project(api_client_for, owner, owner_client, indexed):
    other_project = ProjectFactory(owner=owner)

    assert _search(owner_client, other_project, "harbour").json()["hits"] == []


def test_another_user_gets_404(api_client_for, project, indexed):
    response = _search(api_client_for(UserFactory()), project, "harbour")

    assert (response.status_code, response.json()["error"]["code"]) == (404, "project_not_found")


HOSTILE = [
    '"',
    '"harbour',
    '"harbour fees"',
    "harbour -fees",
    "harbour or lighthouse",
    "a & b | !c",
    "!!!",
    "(((",
    ")",
    ":*",
    "harbour:*",
    "'; DROP TABLE workspace_librarypage; --",
    "\\",
    "<script>alert(1)</script>",
    "-",
    "or",
    "%",
    "_",
    "harbour" * 60,
    "ǅemo 日本語 emoji 🚢",
    "\u202e",
    "a" * 500,
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_give_results_not_errors(owner_client, project, indexed, query):
    response = _search(owner_client, project, query)

    assert response.status_code == 200, response.json()
    assert isinstance(response.json()["hits"], list)


def test_a_nul_in_a_query_is_text_postgresql_cannot_hold(owner_client, project, indexed):
    response = _search(owner_client, project, "harbour\x00")

    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_text"


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("h" * 10_000, "too_long"),
        ("harbour " * 1_250, "too_long"),
        ("", "empty"),
        ("   ", "empty"),
        ("\x1b[2J", "control"),
    ],
    ids=["10000-chars", "10000-chars-words", "empty", "blank", "escape"],
)
def test_queries_search_cannot_take_are_400(owner_client, project, indexed, query, reason):
    response = _search(owner_client, project, query)

    assert response.status_code == 400
    assert (response.json()["error"]["code"], response.json()["error"]["details"]["reason"]) == (
        "search_query_invalid",
        reason,
    )


def test_quoted_phrases_and_exclusions_mean_what_they_say(owner_client, project, indexed):
    phrase = _search(owner_client, project, '"harbour fees"').json()["hits"]
    excluded = _search(owner_client, project, "harbour -fees").json()["hits"]

    assert [hit["page"] for hit in phrase] == [2]
    assert [hit["page"] for hit in excluded] == [1]


def test_the_search_language_is_a_setting(owner, owner_client, project, settings):
    settings.LIBRARY_SEARCH_CONFIG = "simple"  # no stemming, no stop words
    accepted = accept(owner, project, text_pdf(["x"]))
    index_to_success(accepted.job_id, ["the harbours"])

    assert [hit["page"] for hit in _search(owner_client, project, "the").json()["hits"]] == [1]
    assert _search(owner_client, project, "harbour").json()["hits"] == []
