"""Yes-or-no query parameters as the API reads them: ``1``, ``true`` or ``yes`` (any case) mean yes."""


def query_flag(request, name: str) -> bool:
    return request.query_params.get(name, "").lower() in ("1", "true", "yes")
