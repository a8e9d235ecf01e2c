"""A DRF view whose handlers are coroutines.

DRF dispatches synchronously; this base runs the usual authentication,
permission and throttling steps in a thread and awaits the handler, so the view
stays async end to end: when the client disconnects, Django cancels the handler
and the cancellation reaches whatever it awaits. Errors keep the one error shape.
"""

import inspect

from asgiref.sync import sync_to_async
from rest_framework.views import APIView


class AsyncApiView(APIView):
    async def dispatch(self, request, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        request = self.initialize_request(request, *args, **kwargs)
        self.request = request
        self.headers = self.default_response_headers
        try:
            await sync_to_async(self.initial)(request, *args, **kwargs)
            method = request.method.lower()
            handler = getattr(self, method, None) if method in self.http_method_names else None
            response = (handler or self.http_method_not_allowed)(request, *args, **kwargs)
            if inspect.isawaitable(response):
                response = await response
        except Exception as exc:
            response = self.handle_exception(exc)
        self.response = self.finalize_response(request, response, *args, **kwargs)
        return self.response

    def perform_content_negotiation(self, request, force=False):
        # The body is a PDF or the JSON error shape whatever the client's Accept says.
        return super().perform_content_negotiation(request, force=True)
