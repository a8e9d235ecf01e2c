"""drf-spectacular hooks: the public document covers ``/v1/`` only; the worker protocol has its own."""


def public_endpoints_only(endpoints):
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/v1/")]


def worker_endpoints_only(endpoints):
    return [
        endpoint
        for endpoint in endpoints
        if endpoint[0].startswith("/internal/processing/v1/") and not endpoint[0].endswith("/schema")
    ]
