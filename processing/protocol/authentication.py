"""Worker agents authenticate with their identity's bearer token from the deployment TOML."""

import hashlib
from dataclasses import dataclass

from rest_framework import authentication, exceptions

from processing.kernel.configuration import WorkerIdentity, deployment


@dataclass(frozen=True)
class WorkerPrincipal:
    """Stands in ``request.user`` for a worker: authenticated, but never a person and never staff."""

    identity: WorkerIdentity
    is_authenticated: bool = True
    is_staff: bool = False
    pk: None = None


class WorkerTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme != "Bearer" or not token or len(token) > 200:
            raise exceptions.AuthenticationFailed("A worker token is required.")
        identity = deployment().identity_for_token_digest(hashlib.sha256(token.strip().encode()).hexdigest())
        if identity is None:
            raise exceptions.AuthenticationFailed("Unknown worker token.")
        return WorkerPrincipal(identity), None

    def authenticate_header(self, request) -> str:
        return "Bearer"
