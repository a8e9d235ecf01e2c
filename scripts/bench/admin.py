"""`make bench-admin`: the operators' pages with a million jobs and 30 days of rollups, and a rollup pass.

Figures (medians of BENCH_REPS repetitions of BENCH_REQUESTS requests each, over HTTP to the production-like
server, signed in as an operator):
  admin_overview_ms_p50 / p99            the Overview page (its live figures, the fleet, failures)
  admin_overview_live_ms_p50 / p99       its five-second refresh (the live part alone)
  admin_charts_ms_p50_<window> / p99     the charts' data for 1h, 24h and 7d
  admin_job_list_ms_p50 / p99            the job list filtered by state and operation
  admin_job_list_unfiltered_ms_p50 / p99 the job list as an operator first opens it (every job, newest first)
  rollup_busy_minute_ms                  one rollup of a minute in which 10,000 jobs finished
Sizes: BENCH_N jobs (default 1,000,000), BENCH_DAYS of rollups (default 30).
"""

import os
import time
import urllib.request
from datetime import timedelta
from pathlib import Path
from tempfile import TemporaryDirectory

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, percentile, report

REQUESTS = int(os.environ.get("BENCH_REQUESTS", "50"))
DAYS = int(os.environ.get("BENCH_DAYS", "30"))
BUSY_MINUTE_JOBS = int(os.environ.get("BENCH_BUSY_MINUTE", "10000"))
OPERATIONS = ["latex.compile.pdf/v1", "typst.compile.pdf/v1", "pdf.index.text/v1", "test.echo/v1"]

# Jobs spread over the days: mostly succeeded, some failed (by class and code), some cancelled, a few queued.
_JOBS_SQL = """
INSERT INTO processing_processingjob
    (id, operation, requester_id, state, phase, options, options_digest, input_profile, input_filename,
     input_blob_id, input_digest, captured, processor_contract, cache_hit, attempt_count, max_attempts,
     cancellation_requested, failure_class, failure_code, failure_message, diagnostic_log, diagnostics,
     created_at, queued_at, started_at, completed_at)
SELECT gen_random_uuid(), (%(operations)s::text[])[1 + n %% 4], 1 + n %% 50, state, 'complete', '{}', repeat('0', 64),
       '', '', %(blob)s, '', '{}', '', false, 1, 3, false,
       CASE WHEN state = 'failed'
            THEN (ARRAY['processor_rejected', 'resource_limit', 'unsupported_dependency'])[1 + n %% 3] ELSE '' END,
       CASE WHEN state = 'failed' THEN 'code_' || (n %% 7) ELSE '' END, '', '', '[]',
       at, at, at + interval '20 ms', CASE WHEN state = 'queued' THEN NULL ELSE at + interval '900 ms' END
  FROM (SELECT n, now() - (n::float / %(count)s) * %(days)s * interval '1 day' AS at,
               CASE WHEN n %% 100 < 3 THEN 'failed' WHEN n %% 100 = 3 THEN 'cancelled'
                    WHEN n < 50 THEN 'queued' ELSE 'succeeded' END AS state
          FROM generate_series(0, %(count)s - 1) AS n) AS rows
"""
_ROLLUPS_SQL = """
INSERT INTO processing_operationrollup
    (resolution, bucket_start, operation, queued, oldest_queued_seconds, running, started, succeeded, failed,
     cancelled, expired, reused, lease_losses, failure_classes, pickup_ms_p50, pickup_ms_p95, run_ms_p50,
     run_ms_p95, computed_at)
SELECT %(resolution)s, bucket, operation, 3, 12.5, 2, 30, 28, 1, 1, 0, 2, 0, '{"processor_rejected": 1}',
       5.0, 9.0, 900.0, 1400.0, now()
  FROM generate_series(date_trunc(%(unit)s, now()) - %(span)s::interval, date_trunc(%(unit)s, now()),
                       %(step)s::interval) AS bucket,
       unnest(%(operations)s::text[]) AS operation
"""


def _populate(count: int) -> None:
    from django.db import connection
    from django.utils import timezone

    from processing.models import ProcessingBlob

    blob = ProcessingBlob.objects.create(sha256="0" * 64, size_bytes=0, data=b"", touched_at=timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_JOBS_SQL, {"operations": OPERATIONS, "blob": blob.pk, "count": count, "days": DAYS})
        for resolution, unit, span, step in (
            ("minute", "minute", "2 days", "1 minute"),
            ("hour", "hour", f"{DAYS} days", "1 hour"),
        ):
            cursor.execute(
                _ROLLUPS_SQL,
                {"resolution": resolution, "unit": unit, "span": span, "step": step, "operations": OPERATIONS},
            )
        cursor.execute("ANALYZE")


def _operator_cookie() -> str:
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    user = get_user_model().objects.create_superuser("bench-operator", password=None)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return f"{settings.SESSION_COOKIE_NAME}={session.session_key}"


def _timed_gets(url: str, cookie: str) -> list[float]:
    timings = []
    for _ in range(REQUESTS):
        request = urllib.request.Request(url, headers={"Cookie": cookie})  # noqa: S310  loopback http
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310  loopback
            response.read()
            if response.status != 200 or response.url != url:
                raise RuntimeError(f"{url} answered {response.status} at {response.url}")
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def _pages(base: str, cookie: str, count: int) -> None:
    overview = f"{base}/admin/processing/processingjob/overview/"
    targets = {
        "admin_overview": overview,
        "admin_overview_live": f"{overview}?part=live",
        **{f"admin_charts_{window}": f"{overview}charts/?window={window}" for window in ("1h", "24h", "7d")},
        "admin_job_list": f"{base}/admin/processing/processingjob/?state__exact=failed"
        "&operation__exact=latex.compile.pdf%2Fv1",
        "admin_job_list_unfiltered": f"{base}/admin/processing/processingjob/",
    }
    for name, url in targets.items():
        _timed_gets(url, cookie)  # warm: connections, caches, the first plan
        per_rep = {0.5: [], 0.99: []}
        for _ in range(BENCH_REPS):
            timings = _timed_gets(url, cookie)
            for fraction in per_rep:
                per_rep[fraction].append(percentile(timings, fraction))
        for fraction, values in per_rep.items():
            stat = f"p{round(fraction * 100)}"
            figure = (
                f"{name}_ms_{stat}" if not name.startswith("admin_charts_") else f"admin_charts_ms_{stat}_{name[13:]}"
            )
            report(figure, values, unit="ms", n=REQUESTS, config=f"{count} jobs, {DAYS} days of rollups, over HTTP")


def _busy_minute() -> None:
    from django.db import connection
    from django.utils import timezone

    from processing.models import Resolution
    from processing.upkeep.rollups import bucket_write

    minute = timezone.now().replace(second=0, microsecond=0) - timedelta(days=DAYS + 1)  # a minute of its own
    with connection.cursor() as cursor:
        cursor.execute(
            _JOBS_SQL.replace("now() - (n::float", "%(minute)s::timestamptz + (n::float").replace(
                "* %(days)s * interval '1 day'", "* interval '59 seconds'"
            ),
            {"operations": OPERATIONS, "blob": _blob_id(), "count": BUSY_MINUTE_JOBS, "days": 0, "minute": minute},
        )
        cursor.execute(
            "INSERT INTO processing_processingattempt (job_id, number, operation, claim_id, processor_contract,"
            " state, phase, lease_expires_at, started_at, ended_at, failure_class, failure_code, failure_message)"
            " SELECT id, 1, operation, gen_random_uuid(), 'c/1', 'delivered', 'processing', completed_at, started_at,"
            " completed_at, '', '', '' FROM processing_processingjob"
            " WHERE started_at >= %s AND started_at < %s AND completed_at IS NOT NULL",
            [minute, minute + timedelta(minutes=1)],
        )
        cursor.execute("ANALYZE processing_processingjob")
        cursor.execute("ANALYZE processing_processingattempt")
    timings = []
    for _ in range(BENCH_REPS):
        started = time.perf_counter()
        bucket_write(Resolution.MINUTE, minute)
        timings.append((time.perf_counter() - started) * 1000)
    report("rollup_busy_minute_ms", timings, unit="ms", n=BUSY_MINUTE_JOBS, config="one minute bucket, every operation")


def _blob_id() -> int:
    from processing.models import ProcessingBlob

    return ProcessingBlob.objects.values_list("pk", flat=True).first()


def main() -> None:
    from scripts.bench.processes import web_server

    with bench_database() as _, TemporaryDirectory() as temporary:
        os.environ["QUIRE_TEST_OPERATIONS"] = "true"
        django_setup()
        count = n_or(1_000_000)
        print(f"Operators' pages benchmark ({count} jobs, {DAYS} days of rollups)")
        _populate(count)
        cookie = _operator_cookie()
        with web_server({"QUIRE_LOG_LEVEL": "WARNING"}, workers=2, log=Path(temporary) / "web.log") as url:
            _pages(url, cookie, count)
        _busy_minute()


if __name__ == "__main__":
    main()
