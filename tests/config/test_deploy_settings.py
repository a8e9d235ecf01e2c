"""Safe defaults: debug off unless asked for, and a documented production environment that passes
Django's deployment check."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from config.https import https_settings

ROOT = Path(__file__).resolve().parents[2]


def django_run(code: str, **env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "DEBUG"}
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env={**environment, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_debug_is_off_unless_the_environment_turns_it_on():
    off = django_run("from django.conf import settings; print(settings.DEBUG)")
    on = django_run("from django.conf import settings; print(settings.DEBUG)", DEBUG="true")

    assert (off.stdout.strip(), on.stdout.strip()) == ("False", "True"), off.stderr + on.stderr


def test_the_documented_production_environment_passes_the_deployment_check():
    production = {
        "DEBUG": "false",
        "QUIRE_HTTPS": "true",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "quire.example.org",
    }

    check = django_run(
        "from django.core.management import call_command; call_command('check', deploy=True, fail_level='WARNING')",
        **production,
    )

    assert check.returncode == 0, check.stderr


def test_without_https_the_deployment_check_names_the_missing_protections():
    check = django_run(
        "from django.core.management import call_command; call_command('check', deploy=True, fail_level='WARNING')",
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="quire.example.org",
    )

    assert check.returncode != 0
    for warning in ("security.W004", "security.W012", "security.W016"):  # HSTS, session and CSRF cookies
        assert warning in check.stderr


@pytest.fixture
def served_over_https(settings):
    for name, value in https_settings(hsts_seconds=3600).items():
        setattr(settings, name, value)


def test_with_https_plain_http_is_redirected_and_https_answers_with_hsts_and_secure_cookies(served_over_https):
    plain = Client().get("/login/")
    assert plain.status_code == 301 and plain["Location"] == "https://testserver/login/"

    secure = Client().get("/login/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=3600; includeSubDomains; preload"
    assert secure.cookies["csrftoken"]["secure"]


@pytest.mark.django_db
def test_with_https_the_metrics_scrape_stays_on_plain_http(served_over_https):
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
