"""Failed sign-ins are counted per account and per address; past the limit, sign-in pauses for a while."""

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"


@pytest.fixture
def member(db):
    user = UserFactory(username="member")
    user.set_password(PASSWORD)
    user.save()
    return user


def sign_in(username: str, password: str, *, address: str = "198.51.100.7"):
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password})


def fail_until_the_limit(settings, username: str, **address) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = sign_in(username, "wrong password", **address)
        assert response.status_code in (200, 429)


def test_an_account_is_locked_after_its_failures_even_for_the_right_password_and_says_so(settings, member):
    fail_until_the_limit(settings, "member")

    response = sign_in("member", PASSWORD, address="203.0.113.9")  # another address: the account is what counts

    assert response.status_code == 429
    assert b"Too many failed sign-ins" in response.content


def test_an_address_is_locked_after_failures_across_accounts(settings, member):
    for index in range(settings.AXES_FAILURE_LIMIT):
        sign_in(f"guess-{index}", "wrong password")

    assert sign_in("member", PASSWORD).status_code == 429
    assert sign_in("member", PASSWORD, address="203.0.113.9").status_code == 302, "another address signs in"


def test_fewer_failures_than_the_limit_still_sign_in_and_reset_the_count(settings, member):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in("member", "wrong password").status_code == 200

    assert sign_in("member", PASSWORD).status_code == 302
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in("member", "wrong password")
    assert sign_in("member", PASSWORD).status_code == 302, "a success reset the count"


def test_api_tokens_keep_working_for_a_locked_account(settings, member, api_client_for):
    fail_until_the_limit(settings, "member")
    assert sign_in("member", PASSWORD).status_code == 429

    assert api_client_for(member).get("/v1/projects").status_code == 200
