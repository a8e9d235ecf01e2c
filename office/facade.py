"""What other contexts may ask Office. Keyword-only, plain values out."""

from django.conf import settings

from office.engine import office_extension

__all__ = ["host_warm_start", "preview_supported"]


def preview_supported(*, path: str) -> bool:
    """Does a file at ``path`` get an Office preview (.docx .xlsx .pptx .odt .ods .odp)?"""
    return office_extension(path) is not None


def host_warm_start() -> None:
    """Start this server process's converters now, so the first preview does not pay their start-up."""
    if settings.OFFICE_WARM_ON_START and not settings.TESTING:
        from office import services

        services.host()
