from django.apps import AppConfig


class ProcessingConfig(AppConfig):
    name = "processing"

    def ready(self) -> None:
        from processing.finalization.registrations import finalizers_register
        from processing.protocol import schema  # noqa: F401  registers the OpenAPI auth extension

        finalizers_register()
