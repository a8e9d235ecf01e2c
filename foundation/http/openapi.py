"""Shared OpenAPI pieces: the error envelope every failing response uses."""

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

ErrorSerializer = inline_serializer(
    name="Error",
    fields={
        "error": inline_serializer(
            name="ErrorBody",
            fields={
                "code": serializers.CharField(),
                "message": serializers.CharField(),
                "details": serializers.DictField(),
            },
        )
    },
)


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=ErrorSerializer, description=description)


ERROR_RESPONSES = {
    400: error("Invalid input; `error.code` says which rule."),
    401: error("Not authenticated."),
    403: error("Visible, but your role does not allow it."),
    404: error("Not found, or not visible to you."),
}
