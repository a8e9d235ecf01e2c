-- The claim's writes (processing/queue/claims.py), one statement for all the claims of an acquire: each
-- chosen and admitted job's attempt (its lease from the database clock the candidates were read with), its
-- download and upload tickets, and its queued -> running move (processing.kernel.transitions.ALLOWED). The arrays
-- are aligned by position: one element per claim, and one per ticket naming its claim. The admitted jobs'
-- ids come from the placeholder in braces below: every chosen job, or a query compiled from the ORM that
-- checks a single claim's limits. The candidates' statement locked each job as queued (FOR UPDATE rechecks
-- its filter on the row it locks), so the move needs no guard of its own; a guard on the state here let a
-- plan read the whole queue by its index for it.
WITH admitted AS MATERIALIZED ({admitted}),
chosen AS (
    SELECT * FROM unnest(%(job_ids)s::uuid[], %(numbers)s::integer[], %(operations)s::text[],
                         %(claim_ids)s::uuid[], %(contracts)s::text[])
        WITH ORDINALITY AS chosen(job_id, number, operation, claim_id, contract, n)
     WHERE chosen.job_id IN (SELECT admitted.id FROM admitted)
), attempts AS (
    INSERT INTO processing_processingattempt
        (job_id, number, operation, claim_id, session_id, processor_contract, state, phase, lease_expires_at,
         started_at, ended_at, failure_class, failure_code, failure_message)
    SELECT job_id, number, operation, claim_id, %(session_id)s::uuid, contract, 'running', 'processing',
           %(lease_expires_at)s::timestamptz, %(now)s::timestamptz, NULL, '', '', ''
      FROM chosen ORDER BY n
    RETURNING id, claim_id
), tickets AS (
    INSERT INTO processing_transferticket
        (id, secret_sha256, kind, attempt_id, role, media_type, filename, max_bytes, expected_sha256,
         expected_size, blob_id, created_at, expires_at)
    SELECT ticket.id, ticket.secret_sha256, ticket.kind, attempts.id, ticket.role, '', '', ticket.max_bytes,
           ticket.expected_sha256, ticket.expected_size, ticket.blob_id, %(now)s::timestamptz,
           %(ticket_expires_at)s::timestamptz
      FROM unnest(%(ticket_ids)s::uuid[], %(ticket_claim_ids)s::uuid[], %(ticket_secret_sha256s)s::text[],
                  %(ticket_kinds)s::text[], %(ticket_roles)s::text[], %(ticket_max_bytes)s::bigint[],
                  %(ticket_expected_sha256s)s::text[], %(ticket_expected_sizes)s::bigint[],
                  %(ticket_blob_ids)s::bigint[])
           AS ticket(id, claim_id, secret_sha256, kind, role, max_bytes, expected_sha256, expected_size, blob_id)
      JOIN attempts ON attempts.claim_id = ticket.claim_id
), moved AS (
    UPDATE processing_processingjob AS job
       SET state = 'running', phase = 'processing', attempt_count = job.attempt_count + 1,
           started_at = coalesce(job.started_at, %(now)s::timestamptz), next_attempt_at = NULL
     WHERE job.id IN (SELECT chosen.job_id FROM chosen)
)
SELECT claim_id, id FROM attempts
