"""The settings `QUIRE_HTTPS=true` turns on: Quire served over HTTPS, directly or behind a TLS proxy."""


def https_settings(hsts_seconds: int) -> dict:
    return {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        # Prometheus scrapes, and the load balancer checks replicas, from inside the deployment over plain HTTP.
        "SECURE_REDIRECT_EXEMPT": [r"^metrics$", r"^healthz$"],
        # The proxy terminating TLS says so; trust it only behind one (the deployment's, which sets it).
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
        "SECURE_HSTS_SECONDS": hsts_seconds,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
    }
