"""Request guards that run before any view: header size limits in the API's error shape."""

from config.http.errors import json_error_response

MAX_HEADER_BYTES = 16 * 1024
MAX_SINGLE_HEADER_BYTES = 8 * 1024


class HeaderLimitsMiddleware:
    """Refuse requests whose headers are oversized with 431, before authentication reads them."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        sizes = [len(key) + len(str(value)) for key, value in request.META.items() if key.startswith("HTTP_")]
        if sum(sizes) > MAX_HEADER_BYTES or any(size > MAX_SINGLE_HEADER_BYTES for size in sizes):
            return json_error_response(
                "headers_too_large", "The request headers are larger than this server accepts.", 431
            )
        return self.get_response(request)
