from django.conf import settings

from office.models import OfficeSwitch


def background_enabled() -> bool:
    """Background (speculative) conversions run only when both the setting and the admin switch allow."""
    if not settings.OFFICE_BACKGROUND_ENABLED:
        return False
    switch = OfficeSwitch.objects.filter(pk=OfficeSwitch.SINGLETON_PK).first()
    return switch is None or switch.background_enabled
