"""Whether a long-lived connection's credentials still sign its user in.

A request is authenticated once, when it arrives; an editor's socket or a job's long-poll outlives that. They
ask here every access-check interval, with Django's own checks (``django.contrib.auth.get_user``): the session
still exists (not signed out, not expired), its user is active, and the password is the one it was signed in
with. A token must still be unrevoked and its user active.
"""

from types import SimpleNamespace

from django.contrib.auth import get_user
from django.utils.module_loading import import_string

from access.models import ApiToken


def _session_store(session_key: str):
    from django.conf import settings

    return import_string(f"{settings.SESSION_ENGINE}.SessionStore")(session_key=session_key)


def sessions_signed_in(sessions: dict[str, int]) -> set[str]:
    """Of these session keys (each with the user it signed in), those that still sign that user in."""
    signed_in = set()
    for session_key, user_id in sessions.items():
        if not session_key:
            continue
        user = get_user(SimpleNamespace(session=_session_store(session_key)))
        if user.is_authenticated and user.pk == user_id:
            signed_in.add(session_key)
    return signed_in


def token_valid(token_id) -> bool:
    return ApiToken.objects.filter(pk=token_id, revoked_at__isnull=True, user__is_active=True).exists()
