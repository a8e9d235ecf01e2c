"""Request guards and static files, all usable in Django's async path.

Under ASGI, one sync-only middleware makes Django run the whole chain in a
worker thread with extra hops on every request; these stay sync- and
async-capable so API requests pay for one hop (to the view) only.
"""

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.http import JsonResponse
from whitenoise.middleware import WhiteNoiseMiddleware

from config.http.errors import error_body, json_error_response
from config.text_rules import TextNotStorable

MAX_HEADER_BYTES = 16 * 1024
MAX_SINGLE_HEADER_BYTES = 8 * 1024


def _headers_too_large(request) -> bool:
    sizes = [len(key) + len(str(value)) for key, value in request.META.items() if key.startswith("HTTP_")]
    return sum(sizes) > MAX_HEADER_BYTES or any(size > MAX_SINGLE_HEADER_BYTES for size in sizes)


def _refusal(request):
    """The answer to a request refused for its shape, or None."""
    if _headers_too_large(request):
        return json_error_response("headers_too_large", "The request headers are larger than this server accepts.", 431)
    if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
        refusal = TextNotStorable(details={"where": "url"})
        return JsonResponse(error_body(refusal.code, refusal.message, refusal.details), status=refusal.status_code)
    return None


class RequestLimitsMiddleware:
    """Refuse, before authentication reads anything, requests whose headers are oversized (431) and those
    whose path or query holds a NUL, which PostgreSQL's text cannot (400 ``invalid_text``,
    config/text_rules.py)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        return _refusal(request) or self.get_response(request)

    async def _acall(self, request):
        return _refusal(request) or await self.get_response(request)


class StaticFilesMiddleware:
    """WhiteNoise's static file serving, without making every other request take the sync path."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.whitenoise = WhiteNoiseMiddleware(get_response)
        self.prefix = "/" + settings.STATIC_URL.strip("/") + "/"
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def _lookup(self, request):
        if not request.path_info.startswith(self.prefix):
            return None
        if self.whitenoise.autorefresh:
            return self.whitenoise.find_file(request.path_info)
        return self.whitenoise.files.get(request.path_info)

    def __call__(self, request):
        if iscoroutinefunction(self):
            return self._acall(request)
        static_file = self._lookup(request)
        return self.whitenoise.serve(static_file, request) if static_file else self.get_response(request)

    async def _acall(self, request):
        if request.path_info.startswith(self.prefix):
            static_file = await sync_to_async(self._lookup)(request)
            if static_file is not None:
                return await sync_to_async(self.whitenoise.serve)(static_file, request)
        return await self.get_response(request)
