-- Worker request replay in two round trips, as processing.protocol.replay calls them: the current definitions.
-- Migration 0020 installed them (frozen copy: processing/migrations/sql/0020_replay.sql); a change here needs
-- a migration that installs the new text, and tests/processing/migrations compares the two.
--
-- A request in progress is a row without a response, held until its expires_at: a duplicate meeting it is
-- told to retry; one arriving after the hold ran out, or once the holder's process is gone (the backend of its
-- LISTEN connection, which lives as long as the process, has left pg_stat_activity), takes the row over.

CREATE OR REPLACE FUNCTION processing_replay_begin(
    p_identity varchar, p_request_id varchar, p_route varchar, p_payload_sha256 varchar, p_hold_seconds double precision,
    p_holder_pid integer, p_holder_started timestamptz
) RETURNS TABLE (held boolean, payload_sha256 varchar, response_status integer, response_body bytea)
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO processing_workerrequest AS request
        (identity, request_id, route, payload_sha256, response_status, response_body, created_at, expires_at,
         holder_pid, holder_started)
    VALUES (p_identity, p_request_id, p_route, p_payload_sha256, NULL, NULL, now(),
            now() + make_interval(secs => p_hold_seconds), p_holder_pid, p_holder_started)
    ON CONFLICT (identity, request_id) DO UPDATE
        SET route = EXCLUDED.route, payload_sha256 = EXCLUDED.payload_sha256,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at,
            holder_pid = EXCLUDED.holder_pid, holder_started = EXCLUDED.holder_started
        WHERE request.response_status IS NULL AND (
            request.expires_at < now()
            OR (request.holder_pid IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM pg_stat_activity AS activity
                WHERE activity.pid = request.holder_pid AND activity.backend_start = request.holder_started)));
    IF FOUND THEN
        RETURN QUERY SELECT true, NULL::varchar, NULL::integer, NULL::bytea;
        RETURN;
    END IF;
    -- A statement of its own takes a fresh snapshot: it sees the row the conflict was with.
    RETURN QUERY
        SELECT false, stored.payload_sha256, stored.response_status, stored.response_body
        FROM processing_workerrequest AS stored
        WHERE stored.identity = p_identity AND stored.request_id = p_request_id;
END
$$;

CREATE OR REPLACE FUNCTION processing_replay_end(
    p_store boolean, p_identity varchar, p_request_id varchar, p_status integer, p_body bytea,
    p_keep_seconds integer
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_store THEN
        UPDATE processing_workerrequest
        SET response_status = p_status, response_body = p_body, expires_at = now() + make_interval(secs => p_keep_seconds)
        WHERE identity = p_identity AND request_id = p_request_id AND response_status IS NULL;
    ELSE
        DELETE FROM processing_workerrequest
        WHERE identity = p_identity AND request_id = p_request_id AND response_status IS NULL;
    END IF;
END
$$;
