"""Refusals by a request's shape, before anything reads its body or its session.

Django's WSGI handler reads a body only when a view asks for it, so a body over its endpoint's limit
(foundation/http/body_limits.py, under the deployment's cap) is refused here by its declared length without
reading a byte of it. A body without a declared length (``Transfer-Encoding: chunked``) is one Django's WSGI
request would read as empty: it is refused with 411 rather than handed to a view as nothing.
"""

from urllib.parse import unquote_to_bytes

from django.conf import settings
from django.http import JsonResponse

from foundation.errors import PayloadTooLarge
from foundation.http.body_limits import UNDECLARED_BODY_BYTES, body_limit_for
from foundation.http.errors import json_error_response
from foundation.text_rules import TextNotStorable

MAX_HEADER_BYTES = 16 * 1024
MAX_SINGLE_HEADER_BYTES = 8 * 1024


def _headers_too_large(request) -> bool:
    sizes = [len(key) + len(str(value)) for key, value in request.META.items() if key.startswith("HTTP_")]
    return sum(sizes) > MAX_HEADER_BYTES or any(size > MAX_SINGLE_HEADER_BYTES for size in sizes)


def _path_is_utf8(request) -> bool:
    """Whether the path as sent decodes as UTF-8. The ASGI server hands Django a path it already decoded with
    replacement characters, so the bytes are read from the ASGI scope (the WSGI adapter passes it on)."""
    scope = request.META.get("asgi.scope") or getattr(request, "scope", None) or {}
    raw_path = scope.get("raw_path")
    if raw_path is None:
        return True  # plain WSGI: Django re-percent-encodes what is not UTF-8 itself
    try:
        unquote_to_bytes(raw_path).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _error(refusal: PayloadTooLarge | TextNotStorable, **details) -> JsonResponse:
    return json_error_response(refusal.code, refusal.message, refusal.status_code, {**refusal.details, **details})


def _body_refusal(request):
    """413 for a declared length over the endpoint's limit, 411 for a body of no declared length."""
    declared = request.META.get("CONTENT_LENGTH")
    if not declared:
        if "HTTP_TRANSFER_ENCODING" in request.META:
            return json_error_response(
                "length_required", "Send the body with a Content-Length header; chunked bodies are not read.", 411
            )
        return None
    try:
        size = int(declared)
    except ValueError:
        return json_error_response("invalid_content_length", "The Content-Length header is not a number.", 400)
    cap = settings.QUIRE_MAX_REQUEST_BYTES
    if size <= min(UNDECLARED_BODY_BYTES, cap):
        return None  # small enough to read: the view checks its own limit
    endpoint = body_limit_for(request.path_info)
    if endpoint.limit_bytes() < cap:
        limit, refusal = endpoint.limit_bytes(), endpoint.refusal()
    else:
        limit, refusal = cap, PayloadTooLarge(f"Bodies are limited to {cap} bytes.", details={"limit_bytes": cap})
    return _error(refusal, size_bytes=size) if size > limit else None


def _refusal(request):
    """The answer to a request refused for its shape, or None."""
    if not _path_is_utf8(request):
        return json_error_response("invalid_path", "The URL path is not valid UTF-8.", 400)
    if _headers_too_large(request):
        return json_error_response("headers_too_large", "The request headers are larger than this server accepts.", 431)
    if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
        return _error(TextNotStorable(details={"where": "url"}))
    return _body_refusal(request)


class RequestLimitsMiddleware:
    """Refuse, before authentication reads anything, paths that are not UTF-8 (400), oversized headers (431),
    a NUL in the path or query, which PostgreSQL's text cannot hold (400 ``invalid_text``,
    foundation/text_rules.py), and bodies over their endpoint's limit (413) or of no declared length (411)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return _refusal(request) or self.get_response(request)
