"""Comments over the API: threads, replies, resolving, who may do what, and bad input changing nothing."""

import pytest

from access import facade as access
from collaboration.models import Comment, CommentThread
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

TEXT = "We prove the theorem. It follows from the lemma.\n"


@pytest.fixture
def paper(owner_client, project):
    owner_client.put(f"/v1/projects/{project.pk}/files/main.tex", TEXT.encode(), content_type="text/plain")
    return project


@pytest.fixture
def reviewer(paper, owner):
    user = UserFactory(username="reviewer")
    access.member_set(actor_id=owner.pk, project_id=paper.pk, username=user.username, role="viewer")
    return user


def comment_on(client, project, phrase, text="Why?", path="main.tex"):
    start = TEXT.index(phrase)
    body = {"path": path, "from": start, "to": start + len(phrase), "text": text}
    return client.post(f"/v1/projects/{project.pk}/comments", body, format="json")


def threads(client, project, **params):
    response = client.get(f"/v1/projects/{project.pk}/comments", params)
    assert response.status_code == 200, response.content
    return response.json()["threads"]


def test_a_viewer_comments_on_a_sentence_and_the_owner_replies_and_resolves(
    paper, owner, owner_client, reviewer, api_client_for
):
    reviewer_client = api_client_for(reviewer)
    made = comment_on(reviewer_client, paper, "It follows from the lemma.", "Which lemma?")
    assert made.status_code == 201, made.content
    thread = made.json()
    assert (thread["from"], thread["to"], thread["quote"]) == (22, 48, "It follows from the lemma.")
    assert thread["comments"][0]["author"] == "reviewer" and thread["comments"][0]["colour"].startswith("#")

    replied = owner_client.post(
        f"/v1/projects/{paper.pk}/comments/{thread['id']}/replies", {"text": "Lemma 2."}, format="json"
    )
    resolved = owner_client.patch(f"/v1/projects/{paper.pk}/comments/{thread['id']}", {"resolved": True}, format="json")

    assert replied.status_code == 201
    assert [comment["text"] for comment in replied.json()["comments"]] == ["Which lemma?", "Lemma 2."]
    assert resolved.json()["resolved"] is True and resolved.json()["resolved_by"] == owner.username
    (listed,) = threads(reviewer_client, paper)
    assert listed["resolved"] is True
    reopened = reviewer_client.patch(
        f"/v1/projects/{paper.pk}/comments/{thread['id']}", {"resolved": False}, format="json"
    )
    assert reopened.json()["resolved"] is False


def test_comments_never_reach_the_text(paper, owner_client):
    comment_on(owner_client, paper, "theorem", "cite it")

    assert owner_client.get(f"/v1/projects/{paper.pk}/files/main.tex").content.decode() == TEXT


def test_only_its_author_edits_a_comment_and_its_author_or_an_owner_deletes_it(
    paper, owner_client, reviewer, api_client_for
):
    reviewer_client = api_client_for(reviewer)
    thread = comment_on(owner_client, paper, "theorem").json()
    reply = reviewer_client.post(
        f"/v1/projects/{paper.pk}/comments/{thread['id']}/replies", {"text": "agreed"}, format="json"
    ).json()["comments"][1]
    owners_comment = thread["comments"][0]
    base = f"/v1/projects/{paper.pk}/comments/{thread['id']}/replies"

    edit_others = reviewer_client.patch(f"{base}/{owners_comment['id']}", {"text": "changed"}, format="json")
    delete_others = reviewer_client.delete(f"{base}/{owners_comment['id']}")
    edit_own = reviewer_client.patch(f"{base}/{reply['id']}", {"text": "agreed, mostly"}, format="json")
    owner_deletes = owner_client.delete(f"{base}/{reply['id']}")

    assert edit_others.status_code == delete_others.status_code == 403
    assert edit_own.status_code == 200 and edit_own.json()["comments"][1]["edited_at"] is not None
    assert owner_deletes.status_code == 204
    assert list(Comment.objects.values_list("text", flat=True)) == ["Why?"]

    owner_client.delete(f"{base}/{owners_comment['id']}")  # the last comment: the thread goes with it
    assert not CommentThread.objects.exists()


def test_whoever_began_a_thread_deletes_it_whole_only_while_every_comment_is_theirs(
    paper, owner_client, reviewer, api_client_for
):
    reviewer_client = api_client_for(reviewer)
    thread = comment_on(reviewer_client, paper, "theorem").json()
    owner_client.post(f"/v1/projects/{paper.pk}/comments/{thread['id']}/replies", {"text": "mine"}, format="json")
    alone = comment_on(reviewer_client, paper, "lemma").json()

    refused = reviewer_client.delete(f"/v1/projects/{paper.pk}/comments/{thread['id']}")
    allowed = reviewer_client.delete(f"/v1/projects/{paper.pk}/comments/{alone['id']}")

    assert refused.status_code == 403 and Comment.objects.filter(thread_id=thread["id"]).count() == 2
    assert allowed.status_code == 204 and not CommentThread.objects.filter(pk=alone["id"]).exists()
    assert owner_client.delete(f"/v1/projects/{paper.pk}/comments/{thread['id']}").status_code == 204


def test_a_stranger_finds_no_comments_at_all(paper, owner_client, api_client_for):
    stranger = api_client_for(UserFactory())
    thread = comment_on(owner_client, paper, "theorem").json()
    comment_id = thread["comments"][0]["id"]
    base = f"/v1/projects/{paper.pk}/comments"

    answers = [
        stranger.get(base),
        comment_on(stranger, paper, "lemma"),
        stranger.post(f"{base}/{thread['id']}/replies", {"text": "hi"}, format="json"),
        stranger.patch(f"{base}/{thread['id']}", {"resolved": True}, format="json"),
        stranger.delete(f"{base}/{thread['id']}/replies/{comment_id}"),
        stranger.delete(f"{base}/{thread['id']}"),
    ]

    assert [answer.status_code for answer in answers] == [404] * 6
    assert Comment.objects.count() == 1 and CommentThread.objects.get().resolved_at is None


def test_a_thread_of_another_project_is_404(paper, owner, owner_client):
    from tests.factories import ProjectFactory

    other = ProjectFactory(owner=owner, starter=True)
    thread = comment_on(owner_client, paper, "theorem").json()

    answer = owner_client.post(f"/v1/projects/{other.pk}/comments/{thread['id']}/replies", {"text": "x"}, format="json")

    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "comment_not_found")


@pytest.mark.parametrize(
    "body, code",
    [
        ({"path": "main.tex", "from": 5, "to": 5, "text": "x"}, "invalid_range"),
        ({"path": "main.tex", "from": -1, "to": 3, "text": "x"}, "invalid_range"),
        ({"path": "main.tex", "from": 0, "to": len(TEXT) + 1, "text": "x"}, "invalid_range"),
        ({"path": "main.tex", "from": "0", "to": 3, "text": "x"}, "invalid_range"),
        ({"path": "main.tex", "from": 0, "to": 3, "text": "   "}, "invalid_comment"),
        ({"path": "main.tex", "from": 0, "to": 3, "text": "x" * 10_001}, "invalid_comment"),
        ({"path": "main.tex", "from": 0, "to": 3}, "invalid_comment"),
        ({"path": "nowhere.tex", "from": 0, "to": 3, "text": "x"}, "file_not_found"),
    ],
)
def test_bad_input_is_refused_with_a_code_and_changes_nothing(paper, owner_client, body, code):
    answer = owner_client.post(f"/v1/projects/{paper.pk}/comments", body, format="json")

    assert 400 <= answer.status_code < 500
    assert answer.json()["error"]["code"] == code
    assert not CommentThread.objects.exists()


def test_a_nul_in_a_comment_is_refused(paper, owner_client):
    answer = owner_client.post(
        f"/v1/projects/{paper.pk}/comments",
        b'{"path": "main.tex", "from": 0, "to": 3, "text": "a\\u0000b"}',
        content_type="application/json",
    )

    assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid_text"
    assert not CommentThread.objects.exists()
