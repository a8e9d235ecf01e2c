"""Core does not run on a database whose commits a crash could take back, unless the operator says so."""

import logging

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection

from foundation.database.durable_commit import CHECK_ID, check_durable_commit, durable_commit_required

pytestmark = pytest.mark.django_db


@pytest.fixture
def commits_not_flushed():
    with connection.cursor() as cursor:  # this session only, and rolled back with the test's transaction
        cursor.execute("SET synchronous_commit = off")


def test_a_database_with_durable_commits_passes():
    durable_commit_required()
    assert check_durable_commit(databases=["default"]) == []


def test_a_server_refuses_to_start_without_durable_commits(commits_not_flushed):
    with pytest.raises(ImproperlyConfigured, match="synchronous_commit is off"):
        durable_commit_required()


def test_the_database_check_reports_it(commits_not_flushed):
    assert [message.id for message in check_durable_commit(databases=["default"])] == [CHECK_ID]
    with pytest.raises(SystemCheckError, match=CHECK_ID):
        call_command("check", databases=["default"])


def test_an_operator_may_accept_the_loss_and_is_warned_at_start(commits_not_flushed, monkeypatch, caplog):
    monkeypatch.setenv("QUIRE_ALLOW_ASYNC_COMMIT", "true")

    with caplog.at_level(logging.ERROR, logger="foundation.database.durable_commit"):
        durable_commit_required()

    assert "without durable commits" in caplog.text
    assert check_durable_commit(databases=["default"]) == []


@pytest.mark.parametrize("entry_point", ["config.wsgi", "config.asgi"])
def test_either_server_entry_point_refuses_to_start_without_durable_commits(commits_not_flushed, entry_point):
    import importlib
    import sys

    loaded = sys.modules.pop(entry_point, None)
    try:
        with pytest.raises(ImproperlyConfigured, match="synchronous_commit is off"):
            importlib.import_module(entry_point)
    finally:
        sys.modules.pop(entry_point, None)
        if loaded is not None:
            sys.modules[entry_point] = loaded
