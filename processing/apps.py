from django.apps import AppConfig


class ProcessingConfig(AppConfig):
    name = "processing"

    def ready(self) -> None:
        from django.core import checks

        from foundation.database.durable_commit import check_durable_commit
        from processing.finalization.registrations import finalizers_register
        from processing.protocol import schema  # noqa: F401  registers the OpenAPI auth extension

        finalizers_register()
        # Every promise about accepted jobs rests on durable commits (checked with --database default).
        checks.register(check_durable_commit, checks.Tags.database)
