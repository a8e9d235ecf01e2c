"""Routes for testing the in-memory edge handler on its own."""

import threading

from django.http import HttpResponse, StreamingHttpResponse
from django.urls import path

released = threading.Event()


def streamed(request):
    return StreamingHttpResponse(iter([b"first ", b"second"]), status=202, headers={"X-Edge": "kept"})


def wait_for_release(request):
    return HttpResponse(b"released" if released.wait(timeout=10) else b"timed out")


def release(request):
    released.set()
    return HttpResponse(b"done")


urlpatterns = [
    path("streamed", streamed),
    path("wait", wait_for_release),
    path("release", release),
]
