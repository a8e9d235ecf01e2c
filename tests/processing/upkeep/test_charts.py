"""The Overview's chart data: one time axis per window, a series per operation that did anything, gaps as
null; only operators may read it, and an unknown window is a 400 with a code."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from processing.models import OperationRollup, Resolution
from processing.upkeep.charts import chart_data
from tests.factories import UserFactory
from tests.operators.factories import operator_user

pytestmark = pytest.mark.django_db

CHARTS = reverse("admin:processing_overview_charts")
ECHO, LATEX = "test.echo/v1", "latex.compile.pdf/v1"


def rollup(operation, minutes_ago: int, **figures) -> None:
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=minutes_ago)
    OperationRollup.objects.create(
        resolution=Resolution.MINUTE, bucket_start=start, operation=operation, computed_at=timezone.now(), **figures
    )


def test_series_share_one_axis_with_gaps_and_idle_operations_are_left_out():
    rollup(ECHO, 3, queued=2, started=1, succeeded=1, failed=1)
    rollup(ECHO, 1, queued=5)
    rollup(LATEX, 2, started=1, succeeded=1, run_ms_p50=800.0)
    rollup("typst.compile.pdf/v1", 2)  # nothing happened: no series
    rollup(ECHO, 90, queued=7)  # outside the hour

    data = chart_data("1h", timezone.now())

    assert len(data.x) == 3 and data.x == sorted(data.x)
    assert data.operations == [LATEX, ECHO]
    assert data.figures["queued"][ECHO] == [2, None, 5]
    assert data.figures["finished"][ECHO] == [2, None, 0]
    assert data.figures["run_ms_p50"][LATEX] == [None, 800.0, None]


def test_only_operators_read_it_and_a_bad_window_is_refused():
    client = Client()
    client.force_login(UserFactory(is_staff=False))
    assert client.get(CHARTS).status_code == 302, "not staff: sent to sign in"

    client.force_login(operator_user(acting=False))
    assert client.get(CHARTS, {"window": "24h"}).json()["window"] == "24h"
    refused = client.get(CHARTS, {"window": "1y"})
    assert (refused.status_code, refused.json()["code"]) == (400, "window_unknown")
