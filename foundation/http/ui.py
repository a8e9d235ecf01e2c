"""How HTML form handlers report anticipated failures: a message on the page they return to."""

import functools

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme

from foundation.errors import NotFound, QuireError


def back_to(request, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return fallback


def not_found_is_404(view):
    """Decorate a page view: a service's NotFound (another user's project or job, say) is Django's 404."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from exc

    return wrapper


def form_action(fallback_url):
    """Decorate a POST handler: on a QuireError, show its message and go back; 404s stay 404s.

    ``fallback_url(request, **kwargs)`` names where to return when the form gave no ``next``.
    """

    def decorate(view):
        @not_found_is_404
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            try:
                return view(request, *args, **kwargs)
            except NotFound:
                raise
            except QuireError as exc:
                messages.error(request, exc.message)
                return redirect(back_to(request, fallback_url(request, **kwargs)))

        return wrapper

    return decorate
