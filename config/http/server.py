"""The production HTTP worker: gunicorn process management with uvicorn's ASGI server."""

from uvicorn_worker import UvicornWorker

from config.http.middleware import MAX_HEADER_BYTES


class QuireWorker(UvicornWorker):
    # h11 refuses a header block past this size with a bare 400; it sits above
    # Quire's own limit so that most oversized headers get a 431 in the API's error shape.
    CONFIG_KWARGS = {"loop": "asyncio", "http": "h11", "h11_max_incomplete_event_size": 4 * MAX_HEADER_BYTES}
