-- A lone claim's writes (processing/queue/claims.py, _claimed_lone), sent in one round trip after the locking
-- candidates' statement, before the claim knows which job that statement found: as claim_write.sql, but for
-- the candidate it kept in quire.claim_candidates and admitted (the placeholder in braces, a query compiled
-- from the ORM that reads that setting and checks the running limits, the fair share and the session's
-- slots), with the attempt's values read from the job's row. The claim's id and its tickets come from the
-- caller: a download ticket, and upload tickets for the result roles of every operation offered, of which
-- only the claimed operation's are written. The lease and the tickets' expiry run from the transaction's
-- start on the database clock, as the candidates' statement saw it.
WITH admitted AS MATERIALIZED ({admitted}),
chosen AS (
    SELECT job.id AS job_id, job.attempt_count + 1 AS number, job.operation, job.input_blob_id, job.input_digest,
           blob.size_bytes AS input_size, processor.processor_contract AS contract
      FROM processing_processingjob AS job
      JOIN processing_processingblob AS blob ON blob.id = job.input_blob_id
      JOIN processing_workerprocessor AS processor
        ON processor.session_id = %(session_id)s::uuid AND processor.operation = job.operation
     WHERE job.id IN (SELECT admitted.id FROM admitted)
), attempts AS (
    INSERT INTO processing_processingattempt
        (job_id, number, operation, claim_id, session_id, processor_contract, state, phase, lease_expires_at,
         started_at, ended_at, failure_class, failure_code, failure_message)
    SELECT job_id, number, operation, %(claim_id)s::uuid, %(session_id)s::uuid, contract, 'running', 'processing',
           now() + make_interval(secs => %(lease_seconds)s::integer), now(), NULL, '', '', ''
      FROM chosen
    RETURNING id, operation, lease_expires_at
), tickets AS (
    INSERT INTO processing_transferticket
        (id, secret_sha256, kind, attempt_id, role, media_type, filename, max_bytes, expected_sha256,
         expected_size, blob_id, created_at, expires_at)
    SELECT %(download_id)s::uuid, %(download_secret_sha256)s::text, 'download_input', attempts.id, '', '', '',
           chosen.input_size, chosen.input_digest, chosen.input_size, chosen.input_blob_id, now(),
           now() + make_interval(secs => %(ticket_seconds)s::integer)
      FROM attempts, chosen
    UNION ALL
    SELECT upload.id, upload.secret_sha256, 'upload_output', attempts.id, upload.role, '', '', upload.max_bytes,
           '', NULL, NULL, now(), now() + make_interval(secs => %(ticket_seconds)s::integer)
      FROM unnest(%(upload_ids)s::uuid[], %(upload_operations)s::text[], %(upload_secret_sha256s)s::text[],
                  %(upload_roles)s::text[], %(upload_max_bytes)s::bigint[])
           AS upload(id, operation, secret_sha256, role, max_bytes)
      JOIN attempts ON attempts.operation = upload.operation
), moved AS (
    UPDATE processing_processingjob AS job
       SET state = 'running', phase = 'processing', attempt_count = job.attempt_count + 1,
           started_at = coalesce(job.started_at, now()), next_attempt_at = NULL
     WHERE job.id IN (SELECT chosen.job_id FROM chosen)
)
SELECT attempts.id, attempts.lease_expires_at, now() + make_interval(secs => %(ticket_seconds)s::integer)
  FROM attempts
