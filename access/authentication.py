"""DRF authentication by personal API token: ``Authorization: Bearer quire_…``."""

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from access.models import ApiToken
from access.tokens import token_digest

# Operators read "last used" to spot stale tokens; minute precision serves that, and recording every
# request would add a write to each poll and download.
LAST_USED_PRECISION = timedelta(minutes=1)


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
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        return self.keyword
