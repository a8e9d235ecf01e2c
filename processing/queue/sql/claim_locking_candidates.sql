-- The claim's first candidates with their advisory locks (processing/queue/claims.py): the placeholder is the
-- candidates' statement, compiled from the ORM (FIFO, FOR UPDATE SKIP LOCKED); the last parameter is the
-- session's lock key. The locks of the session and of the candidates' requesters and projects are waited
-- for in ascending key order, so two acquires waiting for overlapping sets cannot deadlock; the recount that
-- follows, a later statement, sees what the claims that held them committed. Keys as processing.kernel.advisory
-- derives them (processing_advisory_key, processing/queue/sql/advisory_key.sql). The candidates' ids are kept
-- for the rest of the transaction in the setting quire.claim_candidates (set only when there are some), where
-- the recount and a lone candidate's checked write read them: an acquire sends those in the same round trip
-- as this statement, before it knows its candidates.
WITH candidate AS MATERIALIZED ({query}),
lock AS (
    SELECT count(pg_advisory_xact_lock(key.key)) AS taken
      FROM (SELECT DISTINCT key FROM (
                SELECT %s::bigint AS key
                UNION ALL
                SELECT processing_advisory_key('running-requester', candidate.requester_id::text) FROM candidate
                UNION ALL
                SELECT processing_advisory_key('running-project', candidate.project_id::text) FROM candidate
                 WHERE candidate.project_id IS NOT NULL) AS keys
             ORDER BY key) AS key
), stash AS (
    SELECT set_config('quire.claim_candidates', coalesce(array_agg(candidate.id)::text, '{}'), true) AS ids
      FROM candidate
)
SELECT candidate.* FROM candidate, lock, stash WHERE lock.taken >= 0 AND stash.ids IS NOT NULL
