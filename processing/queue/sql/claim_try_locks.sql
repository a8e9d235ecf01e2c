-- Try each advisory lock of the claim (processing/queue/claims.py) without waiting; the keys not got.
SELECT lock.key FROM unnest(%s::bigint[]) AS lock(key) WHERE NOT pg_try_advisory_xact_lock(lock.key)
