-- The same key as processing.admission.advisory_key: the first 8 bytes of sha256("namespace:value"), signed.
CREATE OR REPLACE FUNCTION processing_advisory_key(namespace text, value text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT ('x' || left(encode(sha256(convert_to(namespace || ':' || value, 'UTF8')), 'hex'), 16))::bit(64)::bigint
$$;
