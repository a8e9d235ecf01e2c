"""DRF authentication by personal API token: ``Authorization: Bearer quire_…``."""

from django.utils import timezone
from rest_framework import authentication, exceptions

from access.models import ApiToken
from access.tokens import token_digest


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            return None
        scheme, _, credential = header.partition(" ")
        if scheme != self.keyword:
            return None
        credential = credential.strip()
        # A repeated Authorization header arrives joined with a comma; refuse it rather than guess.
        if not credential or " " in credential or "," in credential or len(credential) > 200:
            raise exceptions.AuthenticationFailed("Malformed bearer token.")
        token = (
            ApiToken.objects.select_related("user")
            .filter(token_sha256=token_digest(credential), revoked_at__isnull=True, user__is_active=True)
            .first()
        )
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token.user, token

    def authenticate_header(self, request) -> str:
        return self.keyword
