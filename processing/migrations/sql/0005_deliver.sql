CREATE OR REPLACE FUNCTION processing_deliver(
    p_claim_id uuid, p_required_roles jsonb, p_token uuid, p_finalization_seconds integer,
    p_diagnostic_log text, p_diagnostics jsonb
) RETURNS TABLE (outcome text, job_id uuid, missing_roles text[]) LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := now();
    v_job_id uuid;
    v_job record;
    v_attempt record;
    v_missing text[];
BEGIN
    SELECT attempt.job_id INTO v_job_id FROM processing_processingattempt AS attempt
     WHERE attempt.claim_id = p_claim_id;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'claim_lost'::text, NULL::uuid, NULL::text[];
        RETURN;
    END IF;
    SELECT job.state, job.cancellation_requested, job.operation INTO v_job
      FROM processing_processingjob AS job WHERE job.id = v_job_id FOR UPDATE;
    SELECT attempt.id, attempt.state, attempt.lease_expires_at INTO v_attempt
      FROM processing_processingattempt AS attempt WHERE attempt.claim_id = p_claim_id FOR UPDATE;
    IF v_job.state IS DISTINCT FROM 'running' OR v_attempt.state IS DISTINCT FROM 'running'
       OR v_attempt.lease_expires_at <= v_now THEN
        RETURN QUERY SELECT 'claim_lost'::text, v_job_id, NULL::text[];
        RETURN;
    END IF;
    IF v_job.cancellation_requested THEN
        RETURN QUERY SELECT 'cancellation_requested'::text, v_job_id, NULL::text[];
        RETURN;
    END IF;
    SELECT array_agg(required.role ORDER BY required.role) INTO v_missing
      FROM jsonb_array_elements_text(coalesce(p_required_roles -> v_job.operation, '[]'::jsonb)) AS required(role)
     WHERE NOT EXISTS (SELECT 1 FROM processing_stagedoutput AS staged
                        WHERE staged.attempt_id = v_attempt.id AND staged.role = required.role);
    IF v_missing IS NOT NULL THEN
        RETURN QUERY SELECT 'missing_outputs'::text, v_job_id, v_missing;
        RETURN;
    END IF;
    UPDATE processing_processingattempt SET state = 'delivered', ended_at = v_now
     WHERE id = v_attempt.id AND state = 'running';
    UPDATE processing_processingjob
       SET state = 'finalizing', phase = 'validating_result', finalization_token = p_token,
           finalization_expires_at = v_now + make_interval(secs => p_finalization_seconds),
           diagnostic_log = p_diagnostic_log, diagnostics = p_diagnostics
     WHERE id = v_job_id AND state = 'running';
    RETURN QUERY SELECT 'accepted'::text, v_job_id, NULL::text[];
END
$$;
