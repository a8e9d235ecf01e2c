"""The operators' Overview in a real browser: the charts draw the rollups' points with the right latest
values, and the live figures refresh by themselves when a job is submitted."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from playwright.sync_api import expect, sync_playwright

from operators import facade as operators
from processing.models import OperationRollup, Resolution
from processing.submission.submit import job_submit
from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, database_quiet, screenshot, sign_in, user_who_signs_in
from tests.factories import ProjectFactory
from tests.live_site import site_fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ECHO = "test.echo/v1"
OVERVIEW = "/admin/processing/processingjob/overview/"
MINUTES = 30


quire = site_fixture("quire", "operators-overview", operations=[ECHO, "latex.compile.pdf/v1"], test_operations=True)


@pytest.fixture
def page(quire):
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=quire.url, viewport={"width": 1366, "height": 900})
        context.set_default_timeout(15_000)
        yield context.new_page()
        context.close()
        browser.close()
    database_quiet()


def half_an_hour_of_rollups() -> None:
    """One minute row per minute of the last half hour: queued climbing 0, 1, … 29, two finished a minute."""
    last = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=1)
    OperationRollup.objects.bulk_create(
        OperationRollup(
            resolution=Resolution.MINUTE,
            bucket_start=last - timedelta(minutes=MINUTES - 1 - n),
            operation=ECHO,
            queued=n,
            oldest_queued_seconds=float(n * 10),
            running=0,
            started=2,
            succeeded=2,
            run_ms_p50=100.0 + n,
            run_ms_p95=200.0 + n,
            computed_at=timezone.now(),
        )
        for n in range(MINUTES)
    )


def operator_who_signs_in():
    user = user_who_signs_in(is_staff=True)
    user.groups.add(Group.objects.get(name=operators.ACTING_GROUP))
    return user


def test_the_charts_draw_the_rollups_and_the_figures_refresh_by_themselves(page, owner):
    half_an_hour_of_rollups()
    sign_in(page, operator_who_signs_in())

    page.goto(OVERVIEW)

    charts = page.locator("[data-operator-charts]")
    expect(charts).to_have_attribute("data-points", str(MINUTES))
    figures = page.locator("figure.operator-chart")
    expect(figures).to_have_count(6)
    expect(page.locator("figure[data-figure=queued] canvas")).to_have_count(1)
    latest = json.loads(page.locator("figure[data-figure=queued]").get_attribute("data-latest"))
    assert latest == {ECHO: MINUTES - 1}
    assert json.loads(page.locator("figure[data-figure=run_ms_p50]").get_attribute("data-latest")) == {ECHO: 129.0}
    expect(page.locator("[data-chart-time]")).to_contain_text("Data of")
    screenshot(page, "operators-overview-charts", full_page=True)

    queued_cell = page.locator(f'#overview-live tr[data-operation="{ECHO}"] td.numeric').first
    expect(queued_cell).to_have_text("0")
    job_submit(
        actor_id=owner.pk,
        operation_name=ECHO,
        idempotency_key="overview",
        project_id=ProjectFactory(owner=owner, starter=True).pk,
    )
    expect(queued_cell).to_have_text("1", timeout=12_000)  # the live part refreshes every 5 s, no reload


def test_the_seven_day_window_reads_the_hourly_rows(page):
    start = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=5)
    OperationRollup.objects.bulk_create(
        OperationRollup(
            resolution=Resolution.HOUR,
            bucket_start=start + timedelta(hours=n),
            operation=ECHO,
            queued=n,
            started=1,
            computed_at=timezone.now(),
        )
        for n in range(4)
    )
    sign_in(page, operator_who_signs_in())
    page.goto(OVERVIEW)

    page.get_by_role("button", name="7 days").click()

    expect(page.locator("[data-operator-charts]")).to_have_attribute("data-loaded-window", "7d")
    expect(page.locator("[data-operator-charts]")).to_have_attribute("data-points", "4")


def test_a_jobs_page_shows_its_timeline_top_down(page, api_client_for, owner):
    from tests.processing.ui.test_admin_job_page import RETRIED_AFTER_A_LOST_LEASE, job_retried_after_a_lost_lease

    job = job_retried_after_a_lost_lease(api_client_for, owner)
    sign_in(page, operator_who_signs_in())

    page.goto(f"/admin/processing/processingjob/{job.pk}/change/")

    events = page.locator("table[data-timeline] tbody tr td:nth-child(3)")
    expect(events).to_have_text(RETRIED_AFTER_A_LOST_LEASE)
    expect(page.locator("fieldset.collapse, details").filter(has_text="Diagnostics").first).to_be_visible()
    screenshot(page, "operators-job-timeline", full_page=True)


def test_the_job_list_fits_a_1366_pixel_screen(page, owner):
    for n in range(3):
        job_submit(
            actor_id=owner.pk,
            operation_name=ECHO,
            idempotency_key=f"list-{n}",
            project_id=ProjectFactory(owner=owner, starter=True, name=f"A project with a long name {n}").pk,
        )
    sign_in(page, operator_who_signs_in())

    page.goto("/admin/processing/processingjob/")

    expect(page.locator("#result_list tbody tr")).to_have_count(3)
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the list runs {overflow} px off a 1366-px screen"
    assert page.locator("#result_list td.field-created time").first.get_attribute("title")
    screenshot(page, "operators-job-list-1366")


def test_a_charts_y_axis_is_wide_enough_for_its_longest_label(page):
    last = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=1)
    OperationRollup.objects.bulk_create(
        OperationRollup(
            resolution=Resolution.MINUTE,
            bucket_start=last - timedelta(minutes=n),
            operation=ECHO,
            queued=15_000 - n * 500,
            started=0,
            computed_at=timezone.now(),
        )
        for n in range(5)
    )
    sign_in(page, operator_who_signs_in())
    page.goto(OVERVIEW)
    expect(page.locator("[data-operator-charts]")).to_have_attribute("data-points", "5")

    # uPlot draws the labels on a canvas: measure the queued chart's longest y label with the axis's own font.
    room, needed, longest = page.evaluate(
        """() => {
            const charts = document.querySelector("[data-operator-charts]").quireCharts;
            const box = document.querySelector("figure[data-figure=queued]");
            const chart = charts.find((each) => box.contains(each.root));
            const axis = chart.axes[1];
            const labels = axis._values || [];
            const longest = labels.reduce((found, label) => (label.length > found.length ? label : found), "");
            chart.ctx.font = axis.font[0];
            const needed = chart.ctx.measureText(longest).width / window.devicePixelRatio;
            return [axis._size - axis.ticks.size - axis.gap, needed, longest];
        }"""
    )

    assert longest.replace(",", "").replace(".", "").isdigit() and len(longest) >= 5, longest
    assert room >= needed, f"{longest!r} needs {needed:.1f} px and has {room:.1f}"
