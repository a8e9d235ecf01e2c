from django.contrib import admin

from office import services
from office.models import OfficeSwitch
from operators import facade as operators


@admin.register(OfficeSwitch)
class OfficeSwitchAdmin(admin.ModelAdmin):
    """The one switch: turning background conversions off keeps previews and cache hits working."""

    list_display = ["__str__", "background_enabled", "updated_at"]
    fields = ["background_enabled", "updated_at"]
    readonly_fields = ["updated_at"]

    def has_add_permission(self, request) -> bool:
        return operators.can_act(request.user) and not OfficeSwitch.objects.exists()

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return operators.can_act(request.user)

    def save_model(self, request, obj, form, change) -> None:
        services.background_set(enabled=obj.background_enabled, actor=request.user)
        obj.pk = OfficeSwitch.SINGLETON_PK  # the row the service wrote; the admin's log names it
