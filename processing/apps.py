from django.apps import AppConfig


class ProcessingConfig(AppConfig):
    name = "processing"

    def ready(self) -> None:
        from processing.library_views import library_tab_register
        from processing.protocol import schema  # noqa: F401  registers the OpenAPI auth extension

        library_tab_register()
