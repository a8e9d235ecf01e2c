"""Each endpoint's body limit, declared on its view, so a body over it is refused before it is read.

A view that accepts a body larger than a form's declares its limit with ``@body_limit``; the first middleware
(config/http/middleware.py) resolves the request's path to its view and refuses a declared length over that
limit with 413, the error the view itself would raise, before a byte is read. A view without a declaration
accepts ``UNDECLARED_BODY_BYTES``: JSON bodies (the parser's 1 MiB) and forms.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.urls import Resolver404, resolve

from foundation.errors import PayloadTooLarge

UNDECLARED_BODY_BYTES = 2 * 1024 * 1024
# A multipart form carries its file with boundaries, headers and the other fields around it.
FORM_OVERHEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class BodyLimit:
    limit_bytes: Callable[[], int]
    too_large: type[PayloadTooLarge] = PayloadTooLarge

    def refusal(self) -> PayloadTooLarge:
        return self.too_large(details={"limit_bytes": self.limit_bytes()})


UNDECLARED = BodyLimit(lambda: UNDECLARED_BODY_BYTES)


def body_limit(limit_bytes: Callable[[], int], *, too_large: type[PayloadTooLarge] = PayloadTooLarge, form=False):
    """Declare a view's (function or ``APIView`` class) body limit; ``form`` adds a multipart form's overhead."""
    declared = BodyLimit((lambda: limit_bytes() + FORM_OVERHEAD_BYTES) if form else limit_bytes, too_large)

    def mark(view):
        view.body_limit = declared
        return view

    return mark


def body_limit_for(path: str) -> BodyLimit:
    """The limit of the view ``path`` resolves to (decorators copy the mark; DRF's ``as_view`` keeps ``cls``)."""
    try:
        view = resolve(path).func
    except Resolver404:
        return UNDECLARED
    for holder in (view, getattr(view, "cls", None), getattr(view, "view_class", None)):
        declared = getattr(holder, "body_limit", None)
        if isinstance(declared, BodyLimit):
            return declared
    return UNDECLARED
