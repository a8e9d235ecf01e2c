from django.apps import AppConfig
from django.db.models.signals import post_migrate


class OperatorsConfig(AppConfig):
    name = "operators"
    verbose_name = "Operators"

    def ready(self) -> None:
        post_migrate.connect(_groups_grant, sender=self)


def _groups_grant(sender, apps=None, **kwargs) -> None:
    """Models added after the groups' migration get their view permissions granted too (and a flushed
    database, as tests flush it, gets its groups back)."""
    from django.apps import apps as installed

    from operators.roles import groups_grant

    groups_grant(apps or installed)
