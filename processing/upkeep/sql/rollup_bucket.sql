-- One bucket of the operators' rollups (processing/upkeep/rollups.py): every operation's counts and
-- percentiles over [start, end), read by index from the rows of that bucket only (jobs by completed_at,
-- attempts by started_at, lost attempts by ended_at), and upserted. Recomputing a bucket writes the same
-- counts; the gauges are written once, with the row (sampled now when %(sample)s, else from the hour's
-- minute rows when %(from_minutes)s, else left empty), and kept on recomputation.
WITH finished AS (
    SELECT job.operation,
           count(*) FILTER (WHERE job.state = 'succeeded') AS succeeded,
           count(*) FILTER (WHERE job.state = 'failed') AS failed,
           count(*) FILTER (WHERE job.state = 'cancelled') AS cancelled,
           count(*) FILTER (WHERE job.state = 'expired') AS expired,
           count(*) FILTER (WHERE job.cache_hit) AS reused,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY job.run_ms) FILTER (WHERE job.run_ms IS NOT NULL) AS run_p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY job.run_ms) FILTER (WHERE job.run_ms IS NOT NULL) AS run_p95
      FROM (SELECT operation, state, cache_hit,
                   CASE WHEN state IN ('succeeded', 'failed') AND started_at IS NOT NULL AND NOT cache_hit
                        THEN extract(epoch FROM completed_at - started_at) * 1000 END AS run_ms
              FROM processing_processingjob
             WHERE completed_at >= %(start)s AND completed_at < %(end)s) AS job
     GROUP BY job.operation
), failure_classes AS (
    SELECT operation, jsonb_object_agg(failure_class, n) AS classes
      FROM (SELECT operation, failure_class, count(*) AS n
              FROM processing_processingjob
             WHERE completed_at >= %(start)s AND completed_at < %(end)s AND state = 'failed'
             GROUP BY operation, failure_class) AS failures
     GROUP BY operation
), started AS (
    SELECT attempt.operation, count(*) AS started,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY attempt.pickup_ms) FILTER (WHERE attempt.number = 1) AS pickup_p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY attempt.pickup_ms) FILTER (WHERE attempt.number = 1) AS pickup_p95
      FROM (SELECT a.operation, a.number, extract(epoch FROM a.started_at - j.queued_at) * 1000 AS pickup_ms
              FROM processing_processingattempt AS a
              JOIN processing_processingjob AS j ON j.id = a.job_id
             WHERE a.started_at >= %(start)s AND a.started_at < %(end)s) AS attempt
     GROUP BY attempt.operation
), lost AS (
    SELECT operation, count(*) AS lease_losses
      FROM processing_processingattempt
     WHERE state = 'lost' AND ended_at >= %(start)s AND ended_at < %(end)s
     GROUP BY operation
), gauges AS (
    SELECT operation, sum(queued)::integer AS queued, max(oldest) AS oldest, sum(running)::integer AS running
      FROM (SELECT operation, count(*) AS queued, greatest(0, extract(epoch FROM now() - min(queued_at))) AS oldest,
                   0 AS running
              FROM processing_processingjob WHERE state = 'queued' AND %(sample)s GROUP BY operation
            UNION ALL
            SELECT operation, 0, NULL, count(*)
              FROM processing_processingattempt WHERE state = 'running' AND %(sample)s GROUP BY operation) AS now_held
     GROUP BY operation
    UNION ALL
    SELECT operation, max(queued), max(oldest_queued_seconds), max(running)
      FROM processing_operationrollup
     WHERE %(from_minutes)s AND resolution = 'minute' AND bucket_start >= %(start)s AND bucket_start < %(end)s
     GROUP BY operation
), operations AS (
    SELECT unnest(%(operations)s::text[]) AS operation
    UNION SELECT operation FROM finished
    UNION SELECT operation FROM started
    UNION SELECT operation FROM lost
)
INSERT INTO processing_operationrollup
    (resolution, bucket_start, operation, queued, oldest_queued_seconds, running, started, succeeded, failed,
     cancelled, expired, reused, lease_losses, failure_classes, pickup_ms_p50, pickup_ms_p95, run_ms_p50,
     run_ms_p95, computed_at)
SELECT %(resolution)s, %(start)s, operations.operation,
       CASE WHEN %(sample)s OR %(from_minutes)s THEN coalesce(gauges.queued, 0) END,
       gauges.oldest,
       CASE WHEN %(sample)s OR %(from_minutes)s THEN coalesce(gauges.running, 0) END,
       coalesce(started.started, 0), coalesce(finished.succeeded, 0), coalesce(finished.failed, 0),
       coalesce(finished.cancelled, 0), coalesce(finished.expired, 0), coalesce(finished.reused, 0),
       coalesce(lost.lease_losses, 0), coalesce(failure_classes.classes, '{}'::jsonb),
       started.pickup_p50, started.pickup_p95, finished.run_p50, finished.run_p95, now()
  FROM operations
  LEFT JOIN finished ON finished.operation = operations.operation
  LEFT JOIN failure_classes ON failure_classes.operation = operations.operation
  LEFT JOIN started ON started.operation = operations.operation
  LEFT JOIN lost ON lost.operation = operations.operation
  LEFT JOIN gauges ON gauges.operation = operations.operation
 -- The same order in every writer: two loops writing one bucket at once then wait for each other's row
 -- instead of each holding a row the other needs next (a deadlock).
 ORDER BY operations.operation
ON CONFLICT (resolution, operation, bucket_start) DO UPDATE SET
    started = EXCLUDED.started, succeeded = EXCLUDED.succeeded, failed = EXCLUDED.failed,
    cancelled = EXCLUDED.cancelled, expired = EXCLUDED.expired, reused = EXCLUDED.reused,
    lease_losses = EXCLUDED.lease_losses, failure_classes = EXCLUDED.failure_classes,
    pickup_ms_p50 = EXCLUDED.pickup_ms_p50, pickup_ms_p95 = EXCLUDED.pickup_ms_p95,
    run_ms_p50 = EXCLUDED.run_ms_p50, run_ms_p95 = EXCLUDED.run_ms_p95
