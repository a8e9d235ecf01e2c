"""Sign-in lockouts an attacker cannot aim at someone else (django-axes, with two limits instead of one).

Failures count per (account, address) against the low limit (``AXES_FAILURE_LIMIT``): guessing an account's
password from one address pauses that account at that address only, so nobody can lock another person out from
elsewhere. They count per address alone against a much higher limit (``QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT``):
one address guessing across many accounts is stopped, while the people behind a shared address (a campus NAT)
are not locked out by one of them guessing. The address is the connection's own: ``X-Forwarded-For`` counts
only from the configured proxies (``QUIRE_TRUSTED_PROXIES``, read by the HTTP server, config/http/server.py).
"""

from axes.handlers.database import AxesDatabaseHandler
from django.conf import settings
from django.db.models import Sum

# The order of settings.AXES_LOCKOUT_PARAMETERS: the account at its address, then the address alone.
ACCOUNT_AT_ADDRESS, ADDRESS = 0, 1


def _failures(attempts) -> int:
    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0


class AccountAtAddressHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials: dict | None = None) -> int:
        """The failures counted against ``AXES_FAILURE_LIMIT``: the account's at this address, or the limit
        itself once the address alone has reached its own, higher limit."""
        attempts = self.get_user_attempts(request, credentials)
        if _failures(attempts[ADDRESS]) >= settings.QUIRE_SIGNIN_ADDRESS_FAILURE_LIMIT:
            return settings.AXES_FAILURE_LIMIT
        return _failures(attempts[ACCOUNT_AT_ADDRESS])

    def reset_user_attempts(self, request, credentials: dict | None = None) -> int:
        """A success forgets the account's failures at this address, never the address's count of others'
        (or an attacker would clear it by signing in to an account of their own now and then)."""
        deleted, _ = self.filter_user_attempts(request, credentials)[ACCOUNT_AT_ADDRESS].delete()
        return deleted
