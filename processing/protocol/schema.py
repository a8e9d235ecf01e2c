"""Teach drf-spectacular how worker tokens authenticate (loaded from ProcessingConfig.ready)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class WorkerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "processing.protocol.authentication.WorkerTokenAuthentication"
    name = "workerToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "The worker identity's token."}
