CREATE OR REPLACE FUNCTION processing_claim(
    p_session uuid, p_offers jsonb, p_per_requester integer, p_per_project integer, p_lease_seconds integer,
    p_tries integer, p_claim_ids uuid[], p_ticket_ids uuid[], p_ticket_secret_sha256s text[], p_ticket_seconds integer,
    p_upload_roles jsonb, p_upload_ids uuid[], p_upload_secret_sha256s text[]
) RETURNS TABLE (
    job_id uuid, attempt_id bigint, attempt_number integer, operation varchar, processor_contract varchar,
    lease_expires_at timestamptz, input_blob_id bigint, input_digest varchar, options jsonb, input_profile varchar,
    input_filename varchar, project_id uuid, input_size bigint, ticket_expires_at timestamptz, claim_id uuid,
    ticket_id uuid, upload_roles text[], upload_ids uuid[], upload_max_bytes bigint[]
) LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := now();
    v_capacity jsonb;
    v_contracts jsonb;
    v_operations text[];
    v_excluded uuid[] := '{}';
    v_job record;
    v_by_requester bigint;
    v_by_project bigint;
    v_attempt_id bigint;
    v_made integer := 0;
    v_found boolean;
    v_uploads_used integer := 0;
    v_upload_roles text[];
    v_upload_ids uuid[];
    v_upload_max_bytes bigint[];
BEGIN
    -- Lock the session's offered processors: concurrent claims of one session queue here, and the
    -- count below (a later statement, so a fresh snapshot) sees the attempts the others committed.
    PERFORM 1 FROM processing_workerprocessor AS processor
        JOIN processing_workersession AS session ON session.id = processor.session_id
        WHERE processor.session_id = p_session AND p_offers ? processor.operation AND processor.healthy
          AND session.state = 'active' AND session.expires_at > v_now
        ORDER BY processor.operation
        FOR UPDATE OF processor;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT jsonb_object_agg(processor.operation, least(
               (p_offers ->> processor.operation)::integer,
               processor.slots - (SELECT count(*) FROM processing_processingattempt AS attempt
                                   WHERE attempt.session_id = p_session AND attempt.state = 'running'
                                     AND attempt.lease_expires_at > v_now
                                     AND attempt.operation = processor.operation))),
           jsonb_object_agg(processor.operation, processor.processor_contract)
      INTO v_capacity, v_contracts
      FROM processing_workerprocessor AS processor
      JOIN processing_workersession AS session ON session.id = processor.session_id
     WHERE processor.session_id = p_session AND p_offers ? processor.operation AND processor.healthy
       AND session.state = 'active' AND session.expires_at > v_now;

    WHILE v_made < coalesce(array_length(p_claim_ids, 1), 0) LOOP
        SELECT array_agg(capacity.key ORDER BY capacity.key) INTO v_operations
          FROM jsonb_each_text(coalesce(v_capacity, '{}')) AS capacity WHERE capacity.value::integer > 0;
        IF v_operations IS NULL THEN
            RETURN;
        END IF;
        v_found := false;
        -- One candidate at a time, FIFO, so other claimers take the rest meanwhile. Saturated requesters
        -- and projects are computed from the small set of running jobs; the queue is walked on its index.
        FOR v_try IN 1..p_tries LOOP
            SELECT job.id, job.operation, job.requester_id, job.project_id, job.attempt_count, job.started_at,
                   job.input_blob_id, job.input_digest, job.options, job.input_profile, job.input_filename,
                   (SELECT blob.size_bytes FROM processing_processingblob AS blob WHERE blob.id = job.input_blob_id)
                       AS input_size
              INTO v_job
              FROM processing_processingjob AS job
             WHERE job.state = 'queued' AND job.operation = ANY(v_operations)
               AND (job.next_attempt_at IS NULL OR job.next_attempt_at <= v_now)
               AND job.id <> ALL(v_excluded)
               AND job.requester_id NOT IN (
                   SELECT running.requester_id FROM processing_processingjob AS running
                   WHERE running.state = 'running'
                   GROUP BY running.requester_id HAVING count(*) >= p_per_requester)
               AND (job.project_id IS NULL OR job.project_id NOT IN (
                   SELECT running.project_id FROM processing_processingjob AS running
                   WHERE running.state = 'running' AND running.project_id IS NOT NULL
                   GROUP BY running.project_id HAVING count(*) >= p_per_project))
             ORDER BY job.created_at
             LIMIT 1
             FOR UPDATE OF job SKIP LOCKED;
            IF NOT FOUND THEN
                RETURN;
            END IF;

            -- Serialize claimers of the same requester and project, then recount in a later statement.
            PERFORM pg_advisory_xact_lock(processing_advisory_key('running-requester', v_job.requester_id::text));
            IF v_job.project_id IS NOT NULL THEN
                PERFORM pg_advisory_xact_lock(processing_advisory_key('running-project', v_job.project_id::text));
            END IF;
            SELECT (SELECT count(*) FROM processing_processingjob AS running
                     WHERE running.state = 'running' AND running.requester_id = v_job.requester_id),
                   (SELECT count(*) FROM processing_processingjob AS running
                     WHERE running.state = 'running' AND running.project_id = v_job.project_id)
              INTO v_by_requester, v_by_project;

            v_excluded := v_excluded || v_job.id;
            IF v_by_requester < p_per_requester AND (v_job.project_id IS NULL OR v_by_project < p_per_project) THEN
                v_made := v_made + 1;
                INSERT INTO processing_processingattempt
                    (job_id, number, operation, claim_id, session_id, processor_contract, state, phase,
                     lease_expires_at, started_at, ended_at, failure_class, failure_code, failure_message)
                VALUES (v_job.id, v_job.attempt_count + 1, v_job.operation, p_claim_ids[v_made], p_session,
                        v_contracts ->> v_job.operation, 'running', 'processing',
                        v_now + make_interval(secs => p_lease_seconds), v_now, NULL, '', '', '')
                RETURNING id INTO v_attempt_id;
                INSERT INTO processing_transferticket
                    (id, secret_sha256, kind, attempt_id, role, media_type, filename, max_bytes, expected_sha256,
                     expected_size, blob_id, created_at, expires_at)
                VALUES (p_ticket_ids[v_made], p_ticket_secret_sha256s[v_made], 'download_input', v_attempt_id,
                        '', '', '', v_job.input_size, v_job.input_digest, v_job.input_size, v_job.input_blob_id,
                        v_now, v_now + make_interval(secs => p_ticket_seconds));
                -- An upload ticket per result role of the operation (p_upload_roles: operation → [[role,
                -- max bytes], …]), ids and secret digests taken in turn from the arrays the caller sized.
                SELECT coalesce(array_agg(role.value ->> 0 ORDER BY role.n), '{}'),
                       coalesce(array_agg(p_upload_ids[v_uploads_used + role.n::integer] ORDER BY role.n), '{}'),
                       coalesce(array_agg((role.value ->> 1)::bigint ORDER BY role.n), '{}')
                  INTO v_upload_roles, v_upload_ids, v_upload_max_bytes
                  FROM jsonb_array_elements(coalesce(p_upload_roles -> v_job.operation, '[]'))
                       WITH ORDINALITY AS role(value, n);
                INSERT INTO processing_transferticket
                    (id, secret_sha256, kind, attempt_id, role, media_type, filename, max_bytes, expected_sha256,
                     expected_size, blob_id, created_at, expires_at)
                SELECT upload.id, p_upload_secret_sha256s[v_uploads_used + upload.n::integer], 'upload_output',
                       v_attempt_id, upload.role, '', '', upload.max_bytes, '', NULL, NULL, v_now,
                       v_now + make_interval(secs => p_ticket_seconds)
                  FROM unnest(v_upload_ids, v_upload_roles, v_upload_max_bytes)
                       WITH ORDINALITY AS upload(id, role, max_bytes, n);
                v_uploads_used := v_uploads_used + cardinality(v_upload_ids);
                -- The queued → running transition (processing.transitions.ALLOWED), guarded the same way.
                UPDATE processing_processingjob
                   SET state = 'running', phase = 'processing', attempt_count = v_job.attempt_count + 1,
                       started_at = coalesce(v_job.started_at, v_now), next_attempt_at = NULL
                 WHERE id = v_job.id AND state = 'queued';
                v_capacity := jsonb_set(v_capacity, ARRAY[v_job.operation::text],
                                        to_jsonb((v_capacity ->> v_job.operation)::integer - 1));
                RETURN QUERY SELECT v_job.id, v_attempt_id, v_job.attempt_count + 1, v_job.operation::varchar,
                    (v_contracts ->> v_job.operation)::varchar, v_now + make_interval(secs => p_lease_seconds),
                    v_job.input_blob_id, v_job.input_digest::varchar, v_job.options, v_job.input_profile::varchar,
                    v_job.input_filename::varchar, v_job.project_id, v_job.input_size,
                    v_now + make_interval(secs => p_ticket_seconds), p_claim_ids[v_made], p_ticket_ids[v_made],
                    v_upload_roles, v_upload_ids, v_upload_max_bytes;
                v_found := true;
                EXIT;
            END IF;
        END LOOP;
        IF NOT v_found THEN
            RETURN;
        END IF;
    END LOOP;
END
$$;
