CREATE OR REPLACE FUNCTION processing_deliver(
    p_claim_id uuid, p_identity text, p_offers jsonb, p_required_roles jsonb, p_token uuid,
    p_finalization_seconds integer, p_diagnostic_log text, p_diagnostics jsonb
) RETURNS TABLE (
    outcome text, job_id uuid, missing_roles text[], claimable boolean, invalid_offers jsonb,
    job_row processing_processingjob, attempt_row processing_processingattempt, staged_row processing_stagedoutput,
    staged_data bytea
) LANGUAGE plpgsql AS $$
-- Every answer but acceptance is one row of the output variables, the ones not set left NULL.
DECLARE
    v_now timestamptz := now();
    v_holder record;
    v_job record;
    v_attempt record;
BEGIN
    SELECT attempt.job_id, attempt.session_id, session.identity, session.state, session.expires_at INTO v_holder
      FROM processing_processingattempt AS attempt
      LEFT JOIN processing_workersession AS session ON session.id = attempt.session_id
     WHERE attempt.claim_id = p_claim_id;
    IF NOT FOUND OR v_holder.identity IS DISTINCT FROM coalesce(p_identity, v_holder.identity) THEN
        outcome := 'claim_lost';
        RETURN NEXT;
        RETURN;
    END IF;
    job_id := v_holder.job_id;
    -- As processing.protocol.sessions._claimable_slots: neither ended nor lapsed.
    claimable := NOT ((v_holder.state = 'active' AND v_holder.expires_at <= v_now)
                      OR v_holder.state IN ('expired', 'closed'));
    IF claimable THEN
        SELECT jsonb_object_agg(offer.key, offer.value) INTO invalid_offers
          FROM jsonb_each(coalesce(p_offers, '{}'::jsonb)) AS offer
          LEFT JOIN processing_workerprocessor AS processor
                 ON processor.session_id = v_holder.session_id AND processor.operation = offer.key
         WHERE processor.id IS NULL OR (offer.value)::integer > processor.slots;
        IF invalid_offers IS NOT NULL THEN
            outcome := 'offers_invalid';
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    SELECT job.state, job.cancellation_requested, job.operation INTO v_job
      FROM processing_processingjob AS job WHERE job.id = v_holder.job_id FOR UPDATE;
    SELECT attempt.id, attempt.state, attempt.lease_expires_at INTO v_attempt
      FROM processing_processingattempt AS attempt WHERE attempt.claim_id = p_claim_id FOR UPDATE;
    IF v_attempt.state = 'delivered' THEN
        outcome := 'already_delivered';
        SELECT * INTO job_row FROM processing_processingjob AS delivered_job WHERE delivered_job.id = v_holder.job_id;
    ELSIF v_job.state IS DISTINCT FROM 'running' OR v_attempt.state IS DISTINCT FROM 'running'
          OR v_attempt.lease_expires_at <= v_now THEN
        outcome := 'claim_lost';
    ELSIF v_job.cancellation_requested THEN
        outcome := 'cancellation_requested';
    ELSE
        SELECT array_agg(required.role ORDER BY required.role) INTO missing_roles
          FROM jsonb_array_elements_text(coalesce(p_required_roles -> v_job.operation, '[]'::jsonb))
               AS required(role)
         WHERE NOT EXISTS (SELECT 1 FROM processing_stagedoutput AS staged
                            WHERE staged.attempt_id = v_attempt.id AND staged.role = required.role);
        IF missing_roles IS NOT NULL THEN
            outcome := 'missing_outputs';
        END IF;
    END IF;
    IF outcome IS NOT NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    UPDATE processing_processingattempt SET state = 'delivered', ended_at = v_now
     WHERE id = v_attempt.id AND state = 'running';
    UPDATE processing_processingjob
       SET state = 'finalizing', phase = 'validating_result', finalization_token = p_token,
           finalization_expires_at = v_now + make_interval(secs => p_finalization_seconds),
           diagnostic_log = p_diagnostic_log, diagnostics = p_diagnostics
     WHERE id = v_holder.job_id AND state = 'running';
    RETURN QUERY
        SELECT 'accepted'::text, v_holder.job_id, NULL::text[], claimable, NULL::jsonb,
               delivered_job, delivered_attempt, output, blob.data
          FROM processing_processingjob AS delivered_job
          JOIN processing_processingattempt AS delivered_attempt ON delivered_attempt.id = v_attempt.id
          LEFT JOIN processing_stagedoutput AS output ON output.attempt_id = delivered_attempt.id
          LEFT JOIN processing_processingblob AS blob ON blob.id = output.blob_id
         WHERE delivered_job.id = v_holder.job_id
         ORDER BY output.role;
END
$$;
