from django.apps import AppConfig


class ProcessingConfig(AppConfig):
    name = "processing"

    def ready(self) -> None:
        from processing.protocol import schema  # noqa: F401  registers the OpenAPI auth extension
        from processing.views import library_tab_register

        library_tab_register()
