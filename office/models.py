"""Office keeps no documents: its only row is the operators' switch for background conversions."""

from django.db import models


class OfficeSwitch(models.Model):
    """One row (pk=1). Off: prewarms after uploads stop; previews people ask for and cache hits go on."""

    SINGLETON_PK = 1

    background_enabled = models.BooleanField(
        default=True, help_text="Convert uploaded Office files in the background, before anyone opens them."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "Office preview switch"
        verbose_name_plural = "Office preview switch"

    def __str__(self) -> str:
        return f"Background conversions {'on' if self.background_enabled else 'off'}"
