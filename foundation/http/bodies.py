"""Reading raw request bodies against a limit, before any bytes are buffered by the view."""

from django.http.request import RawPostDataException

from foundation.errors import PayloadTooLarge, UnsupportedMediaType

FORM_MEDIA_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


def declared_length(request) -> int | None:
    raw = request.META.get("CONTENT_LENGTH") or ""
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


def raw_body(
    request, *, limit_bytes: int, accept: tuple[str, ...] | None = None, too_large: type = PayloadTooLarge
) -> bytes:
    """The request body; 413 over ``limit_bytes``, 415 for form encodings or types not in ``accept``."""
    media_type = (request.META.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()
    if media_type in FORM_MEDIA_TYPES or (accept is not None and media_type not in accept):
        raise UnsupportedMediaType(
            f"Send the raw bytes{' as ' + ' or '.join(accept) if accept else ''}, "
            f"not {media_type or 'no content type'}.",
            details={"content_type": media_type},
        )
    length = declared_length(request)
    if length is not None and length > limit_bytes:
        raise too_large(details={"limit_bytes": limit_bytes, "size_bytes": length})
    try:
        body = request.body
    except RawPostDataException:
        # A signed-in page's POST to a raw-body API view: DRF's CSRF check read ``request.POST``, which made the
        # view's parser (RawBodyParser) take the stream already; its result is the body.
        body = request.data if isinstance(request.data, bytes) else b""
    if len(body) > limit_bytes:
        raise too_large(details={"limit_bytes": limit_bytes, "size_bytes": len(body)})
    return body
