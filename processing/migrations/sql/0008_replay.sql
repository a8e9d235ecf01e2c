CREATE FUNCTION processing_replay_begin(p_lock bigint, p_identity varchar, p_request_id varchar)
RETURNS TABLE (locked boolean, payload_sha256 varchar, response_status integer, response_body bytea)
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_try_advisory_lock(p_lock) THEN
        RETURN QUERY SELECT false, NULL::varchar, NULL::integer, NULL::bytea;
        RETURN;
    END IF;
    RETURN QUERY
        SELECT true, stored.payload_sha256, stored.response_status, stored.response_body
        FROM (SELECT 1) AS one
        LEFT JOIN processing_workerrequest AS stored
               ON stored.identity = p_identity AND stored.request_id = p_request_id;
END
$$;

CREATE FUNCTION processing_replay_end(
    p_lock bigint, p_store boolean, p_identity varchar, p_request_id varchar, p_route varchar,
    p_payload_sha256 varchar, p_status integer, p_body bytea, p_keep_seconds integer
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_store THEN
        INSERT INTO processing_workerrequest
            (identity, request_id, route, payload_sha256, response_status, response_body, created_at, expires_at)
        VALUES (p_identity, p_request_id, p_route, p_payload_sha256, p_status, p_body, now(),
                now() + make_interval(secs => p_keep_seconds));
    END IF;
    PERFORM pg_advisory_unlock(p_lock);
END
$$;
