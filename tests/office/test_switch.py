"""The operators' switch for background conversions: the setting, the admin row, and their sum."""

import pytest

from office import selectors
from office.models import OfficeSwitch
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_background_runs_by_default():
    assert selectors.background_enabled() is True


def test_the_setting_turns_background_off_whatever_the_switch_says(settings):
    settings.OFFICE_BACKGROUND_ENABLED = False
    OfficeSwitch.objects.create(pk=OfficeSwitch.SINGLETON_PK, background_enabled=True)
    assert selectors.background_enabled() is False


def test_an_operator_turns_background_off_in_the_admin(client):
    operator = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(operator)
    response = client.post("/admin/office/officeswitch/add/", {})  # the checkbox left unticked
    assert response.status_code == 302
    assert selectors.background_enabled() is False
    assert client.get("/admin/office/officeswitch/").status_code == 200
    assert client.get("/admin/office/officeswitch/add/").status_code == 403  # one row only
