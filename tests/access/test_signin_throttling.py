"""Failed sign-ins pause sign-in for an account at an address (a low limit) and for an address alone (a much
higher one): nobody can lock another person out, and one address guessing across accounts is still stopped."""

import re

import pytest
import requests
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
ATTACKER = "198.51.100.7"
ELSEWHERE = "203.0.113.9"


@pytest.fixture
def member(db):
    user = UserFactory(username="member")
    user.set_password(PASSWORD)
    user.save()
    return user


@pytest.fixture
def colleague(db):
    user = UserFactory(username="colleague")
    user.set_password(PASSWORD)
    user.save()
    return user


@pytest.fixture
def address_limit(settings):
    settings.QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT = settings.AXES_FAILURE_LIMIT * 3
    return settings.QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT


def sign_in(username: str, password: str, *, address: str = ATTACKER):
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password})


def fail_until_the_limit(settings, username: str, **address) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = sign_in(username, "wrong password", **address)
        assert response.status_code in (200, 429)


def test_an_account_is_locked_at_the_guessing_address_even_for_the_right_password_and_says_so(settings, member):
    fail_until_the_limit(settings, "member")

    response = sign_in("member", PASSWORD)

    assert response.status_code == 429
    assert b"Too many failed sign-ins" in response.content


def test_guessing_someones_password_cannot_lock_them_out_from_their_own_address(settings, member):
    fail_until_the_limit(settings, "member", address=ATTACKER)

    assert sign_in("member", PASSWORD, address=ELSEWHERE).status_code == 302


def test_a_colleague_behind_the_guessing_address_still_signs_in(settings, member, colleague):
    fail_until_the_limit(settings, "member", address=ATTACKER)

    assert sign_in("colleague", PASSWORD, address=ATTACKER).status_code == 302


def test_an_address_guessing_across_accounts_is_locked_at_its_own_higher_limit(settings, member, address_limit):
    for index in range(address_limit - 1):
        assert sign_in(f"guess-{index}", "wrong password").status_code == 200, "below the address's limit"
    sign_in("guess-last", "wrong password")

    assert sign_in("member", PASSWORD).status_code == 429
    assert sign_in("member", PASSWORD, address=ELSEWHERE).status_code == 302, "another address signs in"


def test_signing_in_to_an_account_of_ones_own_does_not_clear_the_addresss_count(settings, colleague, address_limit):
    for index in range(address_limit - 1):
        sign_in(f"guess-{index}", "wrong password")
    assert sign_in("colleague", PASSWORD).status_code == 302

    sign_in("guess-last", "wrong password")

    assert sign_in("colleague", PASSWORD).status_code == 429


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


@pytest.mark.django_db(transaction=True)
def test_a_forwarded_for_header_from_an_untrusted_peer_does_not_change_the_counted_address(
    settings, live_quire, member
):
    """The real server: without a configured proxy, each attempt naming another X-Forwarded-For is still one
    address guessing one account."""

    def attempt(password: str, forwarded_for: str) -> int:
        browser = requests.Session()
        page = browser.get(f"{live_quire}/login/", timeout=30).text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
        return browser.post(
            f"{live_quire}/login/",
            data={"username": "member", "password": password, "csrfmiddlewaretoken": token},
            headers={"X-Forwarded-For": forwarded_for, "Referer": f"{live_quire}/login/"},
            allow_redirects=False,
            timeout=30,
        ).status_code

    for index in range(settings.AXES_FAILURE_LIMIT):
        attempt("wrong password", f"192.0.2.{index + 1}")

    assert attempt(PASSWORD, "192.0.2.200") == 429


def test_an_operator_lifts_a_pause_at_once(settings, member):
    from django.core.management import call_command

    fail_until_the_limit(settings, "member")
    assert sign_in("member", PASSWORD).status_code == 429

    call_command("axes_reset_username", "member")

    assert sign_in("member", PASSWORD).status_code == 302
