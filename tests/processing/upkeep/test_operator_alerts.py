"""Operators are told without reading logs: each situation below shows its alert in the admin Overview's banner,
and the figures a server then serves on ``/metrics`` fire exactly that rule of config/prometheus/alerts.yml
under ``promtool test rules`` (a healthy server's fire none).

Situations are made by the real code (a finalizer crashing, a delivery left unfinalized, the invariant checker
run by the maintenance sweep, an Office host that does not answer); only times are moved back, in SQL.
"""

import math
import subprocess
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from django.db import connection
from django.db.models import F
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from processing.kernel.outbox import outbox_emit
from processing.models import InvariantReport, JobState, OutboxEvent, ProcessingJob
from processing.queue.delivery import Diagnostics, delivery_accept
from processing.upkeep.reapers import sweep
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_claimed, build_finished

RULES = Path(__file__).resolve().parents[3] / "config" / "prometheus" / "alerts.yml"
ALERTS = [rule["alert"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]
HELD_FOR = timedelta(minutes=15)  # how long the scraped figures are held in promtool's series: past every ``for``


@pytest.fixture
def staff_client(client, django_user_model):
    operator = django_user_model.objects.create_superuser("operator", password="operator-password")
    client.force_login(operator)
    return client


def _banner(staff_client) -> list[str]:
    page = staff_client.get("/admin/processing/processingjob/overview/?part=live")
    assert page.status_code == 200
    return [alert.name for alert in page.context["alerts"]]


def _scraped(client) -> list[dict]:
    """The /metrics figures as promtool input series, each held at its value."""
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    series = []
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            if not math.isfinite(sample.value):
                continue
            labels = ",".join(f'{key}="{_escaped(value)}"' for key, value in sorted(sample.labels.items()))
            minutes = int(HELD_FOR.total_seconds() // 60)
            series.append({"series": f"{sample.name}{{{labels}}}", "values": f"{sample.value!r}+0x{minutes}"})
    return series


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _firing(tmp_path: Path, series: list[dict], expected: set[str]) -> None:
    """promtool evaluates the rules over the held figures: exactly ``expected`` fire at the end, and every rule
    passes ``promtool check rules``. Annotations are left out of the comparison (promtool compares them
    verbatim); their templates are checked by ``check rules``."""
    check = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    rules = yaml.safe_load(RULES.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(rules))
    labels = {rule["alert"]: rule.get("labels", {}) for group in rules["groups"] for rule in group["rules"]}
    cases = [
        {
            "eval_time": f"{int(HELD_FOR.total_seconds() // 60)}m",
            "alertname": name,
            "exp_alerts": [{"exp_labels": labels[name]}] if name in expected else [],
        }
        for name in ALERTS
    ]
    tests = {
        "rule_files": ["rules.yml"],
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": cases}],
    }
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests))
    result = subprocess.run(
        ["promtool", "test", "rules", "tests.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _told(staff_client, client, tmp_path, name: str) -> None:
    assert _banner(staff_client) == [name]
    _firing(tmp_path, _scraped(client), {name})


@pytest.mark.django_db
def test_a_healthy_server_raises_no_alert(staff_client, client, tmp_path):
    sweep()  # the invariant checker runs: a fresh report, nothing broken

    assert _banner(staff_client) == []
    _firing(tmp_path, _scraped(client), set())


@pytest.mark.django_db
def test_a_finalizer_that_crashed(staff_client, client, tmp_path, owner_client, project, monkeypatch):
    from processing.finalization import builds

    def crash(job, output):
        raise TypeError("unexpected shape")

    monkeypatch.setattr(builds, "staged_bytes_verified", crash)  # a finalizer's defect, as a bug would be
    job_id = submit_build(owner_client, project, key="crash").json()["id"]
    assert build_finished(build_claimed(job_id)).state == JobState.FAILED

    _told(staff_client, client, tmp_path, "QuireFinalizerCrashed")


@pytest.mark.django_db
def test_a_finalization_nobody_recovers(staff_client, client, tmp_path, owner_client, project):
    job_id = submit_build(owner_client, project, key="left").json()["id"]
    claim = build_claimed(job_id)
    from tests.processing.lifecycle import pdf_bytes, stage

    stage(claim, "pdf", "application/pdf", "main.pdf", pdf_bytes())
    stage(claim, "log", "text/plain", "main.log", b"This is pdfTeX\n")
    delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics(log="build log"))  # its finalizer died here
    ProcessingJob.objects.filter(pk=job_id).update(finalization_expires_at=F("finalization_expires_at") - HELD_FOR)

    _told(staff_client, client, tmp_path, "QuireFinalizationsOverdue")


@pytest.mark.django_db
def test_a_broken_invariant(staff_client, client, tmp_path, owner_client, project):
    job_id = submit_build(owner_client, project, key="late").json()["id"]
    # Past its queue deadline with no reaper having expired it: a promise the checker holds the loop to.
    ProcessingJob.objects.filter(pk=job_id).update(deadline_at=timezone.now() - HELD_FOR)
    from processing.upkeep.alerts import invariants_check_if_due

    assert invariants_check_if_due() >= 1
    ProcessingJob.objects.filter(pk=job_id).update(deadline_at=timezone.now() + HELD_FOR)  # only the report tells

    _told(staff_client, client, tmp_path, "QuireInvariantBroken")


@pytest.mark.django_db
def test_an_invariant_checker_that_stopped_running(staff_client, client, tmp_path):
    sweep()
    InvariantReport.objects.update(checked_at=F("checked_at") - HELD_FOR - HELD_FOR)

    _told(staff_client, client, tmp_path, "QuireInvariantCheckStale")


@pytest.mark.django_db
def test_an_office_host_that_does_not_answer(staff_client, client, tmp_path):
    from office.host_client import RemoteHost
    from office.runtime import host_runtime_replace

    sweep()
    previous = host_runtime_replace(RemoteHost(str(tmp_path / "nobody-listens.sock")))
    try:
        _told(staff_client, client, tmp_path, "QuireOfficeHostDown")
    finally:
        host_runtime_replace(previous)


@pytest.mark.django_db
def test_an_outbox_older_than_its_threshold(staff_client, client, tmp_path):
    sweep()
    outbox_emit(kind="document.version.accepted", payload={"probe": True})
    OutboxEvent.objects.update(created_at=F("created_at") - HELD_FOR)

    _told(staff_client, client, tmp_path, "QuireOutboxBehind")


@pytest.mark.django_db(transaction=True)
def test_a_server_that_does_not_reach_its_database(client, tmp_path):
    with _database_out_of_reach():
        series = _scraped(client)

    _firing(tmp_path, series, {"QuireDatabaseUnreachable"})


@contextmanager
def _database_out_of_reach():
    """This process's connection points at a socket directory where no PostgreSQL listens."""
    settings_dict = connection.settings_dict
    saved = settings_dict["HOST"], settings_dict["PORT"]
    connection.close()
    settings_dict["HOST"], settings_dict["PORT"] = "/nonexistent-quire-socket-dir", "5432"
    try:
        yield
    finally:
        connection.close()
        settings_dict["HOST"], settings_dict["PORT"] = saved
