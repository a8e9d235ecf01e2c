"""drf-spectacular hooks: the public document covers ``/v1/`` only; the worker protocol has its own."""

from quire_wire import PROTOCOL_PREFIX


def public_endpoints_only(endpoints):
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/v1/")]


def worker_endpoints_only(endpoints):
    return [
        endpoint
        for endpoint in endpoints
        if endpoint[0].startswith(PROTOCOL_PREFIX + "/") and not endpoint[0].endswith("/schema")
    ]


ERROR_REF = {"$ref": "#/components/schemas/Error"}
EVERY_OPERATION = {
    "400": "Invalid input, malformed JSON or query parameters; `error.code` says which rule.",
    "401": "Not authenticated, or a malformed, unknown or revoked token.",
    "431": "Request headers are too large.",
}
WITH_BODY = {
    "413": "The body is larger than this endpoint accepts.",
    "415": "This endpoint does not accept that content type.",
}


def document_common_errors(result, generator, request, public):
    """drf-spectacular postprocessing: every /v1 operation documents the errors any request can meet."""
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/v1/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            common = {**EVERY_OPERATION, **(WITH_BODY if "requestBody" in operation else {})}
            for status, description in common.items():
                responses.setdefault(
                    status,
                    {"description": description, "content": {"application/json": {"schema": ERROR_REF}}},
                )
    return result
