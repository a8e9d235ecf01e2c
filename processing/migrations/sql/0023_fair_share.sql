-- A requester's fair share of an operation's slots: the slots live, healthy processors registered for it,
-- divided among the requesters with work of it running or queued, rounded up, at least one. The claim
-- passes over a requester holding its share while another waits (ProcessingJob.objects.within_fair_share),
-- and the maintenance loop stops the builds a requester holds beyond it (processing/queue/fair_share.py).
--
-- The queued requesters are found by skipping through job_queued_by_requester (one probe per requester,
-- never a walk through a requester's own queue) and counted only up to the slots: from there on the share
-- is one whatever the count. PL/pgSQL, so each session plans the statement once (a SQL function's body is
-- planned at every call that does not inline it, and the claim calls it on every claim).
CREATE OR REPLACE FUNCTION processing_fair_share(p_operation varchar) RETURNS integer
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (WITH RECURSIVE capacity AS (
        SELECT COALESCE(SUM(processor.slots), 0)::integer AS slots
        FROM processing_workerprocessor AS processor
        JOIN processing_workersession AS session ON session.id = processor.session_id
        WHERE processor.operation = p_operation AND processor.healthy
          AND session.state = 'active' AND session.expires_at > now()
    ), queued (requester_id, seen) AS (
        (SELECT job.requester_id, 1 FROM processing_processingjob AS job
         WHERE job.state = 'queued' AND job.operation = p_operation
         ORDER BY job.requester_id LIMIT 1)
        UNION ALL
        SELECT next.requester_id, queued.seen + 1
        FROM queued CROSS JOIN LATERAL (
            SELECT job.requester_id FROM processing_processingjob AS job
            WHERE job.state = 'queued' AND job.operation = p_operation AND job.requester_id > queued.requester_id
            ORDER BY job.requester_id LIMIT 1
        ) AS next
        WHERE queued.seen < (SELECT slots FROM capacity)
    ), active AS (
        SELECT requester_id FROM queued
        UNION
        SELECT job.requester_id FROM processing_processingjob AS job
        WHERE job.state = 'running' AND job.operation = p_operation
    )
    SELECT GREATEST(1, ((SELECT slots FROM capacity) + count(*)::integer - 1) / GREATEST(1, count(*)::integer))
    FROM active);
END
$$;
